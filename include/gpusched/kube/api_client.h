// ApiClient: HTTP requests against the Kubernetes API server over libcurl: GETs whole or streamed
// (watch responses and list pages are handed over as they arrive, never buffered whole), and the
// few writes gpusched makes (Send: placeholder pods and their Lease, app/placeholder_controller.h).
//
// One client holds one connection (kept alive between calls) and is used by one thread. TLS uses
// the config's CA, client certificate and key from memory; a bearer token read from a file is
// re-read before every request and taken when its text changed (util/file_change.h), since
// service-account tokens rotate.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "gpusched/kube/kube_config.h"

namespace gpusched {

struct HttpResult {
  long status = 0;    // HTTP status; 0 when the transfer failed
  std::string body;   // the whole body (Get), or the first kMaxErrorBody bytes of a non-200 answer
                      // (Stream)
  std::string error;  // transport error text, empty on success
  bool ok() const { return error.empty() && status == 200; }
  // What went wrong, for a message: the transport error, else "HTTP <status>".
  std::string failure() const { return error.empty() ? "HTTP " + std::to_string(status) : error; }
};

struct ApiClientOptions {
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds request_timeout{60};  // whole-request limit for Get
  // A stream whose answer has not begun this long after the request is abandoned (a hung
  // server). A begun stream may stay quiet until its own timeout: a calm cluster's watch does.
  std::chrono::seconds stream_idle_timeout{120};
};

class ApiClient {
 public:
  ApiClient(KubeConfig config, ApiClientOptions options = {});
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // GET `path_and_query` (e.g. "/api/v1/nodes?limit=500").
  HttpResult Get(const std::string& path_and_query);
  // `method` (POST, PUT, DELETE, PATCH, ...) with `body` as `content_type`; keeps at most
  // `max_answer` bytes of the answer (a longer one is cut there and reported as a transport error).
  HttpResult Send(const char* method, const std::string& path_and_query, std::string_view body,
                  size_t max_answer = kMaxSendAnswer,
                  const char* content_type = "application/json");
  static constexpr size_t kMaxSendAnswer = 4 * 1024 * 1024;
  // GET and hand the bytes of a 200 answer to `on_data` as they arrive; stops when the response
  // ends, `on_data` returns false, `cancel` turns true, or the answer does not begin in time.
  // With `gzip`, the server may compress (for list pages; a watch must see each event at once).
  HttpResult Stream(const std::string& path_and_query,
                    const std::function<bool(std::string_view bytes)>& on_data,
                    const std::atomic<bool>& cancel, std::chrono::seconds total_timeout,
                    bool gzip = false);
  // What a non-200 streamed answer keeps of its body (a Status object is a few hundred bytes).
  static constexpr size_t kMaxErrorBody = 64 * 1024;

  const KubeConfig& config() const { return config_; }

 private:
  struct Impl;
  void Prepare(const std::string& path_and_query);
  void RereadToken();

  KubeConfig config_;
  ApiClientOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched
