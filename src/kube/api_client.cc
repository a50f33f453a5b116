#include "gpusched/kube/api_client.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string_view>

#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include "gpusched/util/file_change.h"
#include "gpusched/util/file_text.h"

namespace gpusched {
namespace {

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

struct BoundedBody {
  std::string* body;
  size_t max;
};
size_t AppendBounded(char* data, size_t size, size_t count, void* user) {
  auto* b = static_cast<BoundedBody*>(user);
  if (b->body->size() + size * count > b->max) return 0;  // curl stops: CURLE_WRITE_ERROR
  b->body->append(data, size * count);
  return size * count;
}

// Service account tokens are a few KB; the file is read before every request.
constexpr size_t kMaxTokenBytes = 1 << 20;

struct StreamState {
  std::string error_body;
  const std::function<bool(std::string_view)>* on_data;
  const std::atomic<bool>* cancel;
  CURL* curl;
  std::chrono::steady_clock::time_point answer_due;  // the response header must come by then
  bool stopped = false;
  bool timed_out = false;
};

size_t HandOver(char* data, size_t size, size_t count, void* user) {
  auto* s = static_cast<StreamState*>(user);
  std::string_view bytes(data, size * count);
  long status = 0;
  curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {  // an error body: its beginning is kept for the caller
    size_t room =
        ApiClient::kMaxErrorBody - std::min(s->error_body.size(), ApiClient::kMaxErrorBody);
    s->error_body.append(bytes.substr(0, room));
    return bytes.size();
  }
  if (!(*s->on_data)(bytes)) {
    s->stopped = true;
    return 0;  // aborts the transfer
  }
  return bytes.size();
}

// Ends a stream when asked to, or when the server has not begun its answer in time. Once the
// answer has begun, a quiet stream is healthy: a watch on a calm cluster may carry nothing but a
// bookmark now and then, and it ends by itself at its timeoutSeconds.
int CheckCancel(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* s = static_cast<StreamState*>(user);
  if (s->cancel->load()) return 1;
  long status = 0;
  curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status == 0 && std::chrono::steady_clock::now() > s->answer_due) {
    s->timed_out = true;
    return 1;
  }
  return 0;
}

void SetBlob(CURL* curl, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, option, &blob);
}

}  // namespace

struct ApiClient::Impl {
  CURL* curl = nullptr;
  curl_slist* headers = nullptr;
  std::string token;
  std::optional<FileChange> token_file;  // when the config names one
  char error[CURL_ERROR_SIZE] = {};

  ~Impl() {
    if (headers) curl_slist_free_all(headers);
    if (curl) curl_easy_cleanup(curl);
  }
};

ApiClient::ApiClient(KubeConfig config, ApiClientOptions options)
    : config_(std::move(config)), options_(options), impl_(std::make_unique<Impl>()) {
  GlobalInitOnce();
  impl_->curl = curl_easy_init();
  impl_->token = config_.token;
  if (!config_.token_file.empty()) {
    impl_->token_file.emplace(config_.token_file, [](const std::string& path) {
      return ReadFileText(path, kMaxTokenBytes, "service account token");
    });
  }
}

ApiClient::~ApiClient() = default;

// Takes the token file's text when it has changed: kubelet rotates projected service-account
// tokens. A file that cannot be read, or holds no token, leaves the previous token in force.
void ApiClient::RereadToken() {
  const FileChange::Look* look = impl_->token_file->Check();
  if (!look) return;
  if (!look->read()) {
    spdlog::warn("keeping the previous token: {}", look->problems.lines()[0]);
    return;
  }
  std::string_view token = look->text;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.remove_suffix(1);
  if (!token.empty()) impl_->token = token;
}

void ApiClient::Prepare(const std::string& path_and_query) {
  CURL* c = impl_->curl;
  curl_easy_reset(c);  // keeps the connection cache, so the connection is reused
  std::string url = config_.server + path_and_query;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, impl_->error);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
  if (!config_.ca_pem.empty()) SetBlob(c, CURLOPT_CAINFO_BLOB, config_.ca_pem);
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!config_.client_cert_pem.empty()) {
    SetBlob(c, CURLOPT_SSLCERT_BLOB, config_.client_cert_pem);
    curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
  }
  if (!config_.client_key_pem.empty()) {
    SetBlob(c, CURLOPT_SSLKEY_BLOB, config_.client_key_pem);
    curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
  }
  if (impl_->token_file) RereadToken();
  if (impl_->headers) curl_slist_free_all(impl_->headers);
  impl_->headers = curl_slist_append(nullptr, "Accept: application/json");
  if (!impl_->token.empty()) {
    std::string auth = "Authorization: Bearer " + impl_->token;
    impl_->headers = curl_slist_append(impl_->headers, auth.c_str());
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, impl_->headers);
  impl_->error[0] = '\0';
}

HttpResult ApiClient::Get(const std::string& path_and_query) {
  Prepare(path_and_query);
  HttpResult r;
  // gzip, which the API server offers for large responses (not "": that would also offer
  // brotli, whose slow high-ratio modes some servers pick).
  curl_easy_setopt(impl_->curl, CURLOPT_ACCEPT_ENCODING, "gzip");
  curl_easy_setopt(impl_->curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(impl_->curl, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(impl_->curl, CURLOPT_TIMEOUT,
                   static_cast<long>(options_.request_timeout.count()));
  CURLcode code = curl_easy_perform(impl_->curl);
  if (code != CURLE_OK) {
    r.error = impl_->error[0] ? impl_->error : curl_easy_strerror(code);
    return r;
  }
  curl_easy_getinfo(impl_->curl, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

HttpResult ApiClient::Send(const char* method, const std::string& path_and_query,
                           std::string_view body, size_t max_answer, const char* content_type) {
  Prepare(path_and_query);
  CURL* c = impl_->curl;
  std::string type = std::string("Content-Type: ") + content_type;
  impl_->headers = curl_slist_append(impl_->headers, type.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, impl_->headers);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  if (!body.empty() || std::string_view(method) != "DELETE") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  HttpResult r;
  BoundedBody answer{&r.body, max_answer};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendBounded);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, static_cast<long>(options_.request_timeout.count()));
  CURLcode code = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  if (code != CURLE_OK) r.error = impl_->error[0] ? impl_->error : curl_easy_strerror(code);
  return r;
}

HttpResult ApiClient::Stream(const std::string& path_and_query,
                             const std::function<bool(std::string_view)>& on_data,
                             const std::atomic<bool>& cancel, std::chrono::seconds total_timeout,
                             bool gzip) {
  Prepare(path_and_query);
  CURL* c = impl_->curl;
  // Watches ask for no compression: a compressing server may hold small events in its
  // compressor's buffer, and a watch must see each event as it happens.
  if (gzip) curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
  StreamState state{
      {}, &on_data, &cancel, c, std::chrono::steady_clock::now() + options_.stream_idle_timeout};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, HandOver);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, CheckCancel);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &state);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, static_cast<long>(total_timeout.count()));
  CURLcode code = curl_easy_perform(c);
  HttpResult r;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  r.body = std::move(state.error_body);
  if (state.timed_out) {
    r.error = "no answer within " + std::to_string(options_.stream_idle_timeout.count()) + " s";
  } else if (code != CURLE_OK && !state.stopped) {
    r.error = impl_->error[0] ? impl_->error : curl_easy_strerror(code);
  }
  return r;
}

}  // namespace gpusched
