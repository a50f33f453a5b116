#include "gpusched/kube/reflector.h"

#include <spdlog/spdlog.h>

#include "gpusched/codec/k8s_decode.h"

namespace gpusched {
namespace {

using simdjson::ondemand::field;
using simdjson::ondemand::json_type;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

// metadata.resourceVersion of `o` (iteration restarts from the beginning afterwards).
std::string ResourceVersionOf(object o) {
  std::string rv;
  for (field f : o) {
    if (f.unescaped_key().value() != "metadata") continue;
    for (field m : f.value().get_object()) {
      if (m.unescaped_key().value() == "resourceVersion") rv = std::string(ScalarText(m.value()));
    }
  }
  o.reset();
  return rv;
}

// The code of a v1.Status object, 0 if absent.
int64_t StatusCode(object o) {
  int64_t code = 0;
  for (field f : o) {
    if (f.unescaped_key().value() == "code") code = f.value().get_int64();
  }
  return code;
}

std::string Query(std::string_view path, std::initializer_list<std::string> params) {
  std::string q(path);
  char sep = '?';
  for (const auto& p : params) {
    if (p.empty()) continue;
    q += sep + p;
    sep = '&';
  }
  return q;
}

std::string UrlEncode(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

Reflector::Reflector(std::string path, KubeConfig config, ReflectorSink& sink,
                     ReflectorOptions options, uint64_t seed)
    : path_(std::move(path)),
      sink_(sink),
      options_(options),
      client_(std::make_unique<ApiClient>(std::move(config), options.client)),
      backoff_(options.backoff_initial),
      rng_(seed) {
  thread_ = std::thread([this] { Run(); });
}

Reflector::~Reflector() { Stop(); }

void Reflector::RequestStop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
}

void Reflector::Stop() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
}

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::chrono::steady_clock::time_point FromNs(int64_t ns) {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

}  // namespace

std::chrono::steady_clock::time_point Reflector::last_contact() const {
  return FromNs(last_contact_ns_.load());
}

std::chrono::steady_clock::time_point Reflector::last_progress() const {
  return FromNs(last_progress_ns_.load());
}

void Reflector::Touch() { last_contact_ns_ = NowNs(); }

void Reflector::Progress() { last_progress_ns_ = NowNs(); }

template <class F>
bool Reflector::Isolated(std::string_view what, F&& decode) {
  std::string error;
  std::atomic<uint64_t>* counter = nullptr;
  try {
    decode();
    return true;
  } catch (const DecodeError& e) {
    error = e.what();
    counter = &skipped_invalid_;
  } catch (const simdjson::simdjson_error& e) {
    error = simdjson::error_message(e.error());
    counter = &skipped_malformed_;
  }
  uint64_t n = counter->fetch_add(1) + 1;
  // A hostile user may create many such objects: the log names the first few, then counts.
  if (n <= 10 || n % 1000 == 0) {
    spdlog::warn("{}: skipped {} ({} so far of this kind): {}", path_, what, n, error);
  }
  return false;
}

void Reflector::Backoff() {
  // Full jitter in [backoff/2, backoff], then double up to the maximum.
  std::uniform_int_distribution<int64_t> jitter(backoff_.count() / 2, backoff_.count());
  std::chrono::milliseconds wait(jitter(rng_));
  backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  std::unique_lock lock(mu_);
  wake_.wait_for(lock, wait, [this] { return stop_.load(); });
}

void Reflector::Run() {
  bool need_list = true;
  while (!stop_) {
    if (need_list) {
      if (!List()) {
        if (!stop_) Backoff();
        continue;
      }
      need_list = false;
    }
    WatchEnd end = Watch();
    if (stop_) break;
    watch_restarts_.fetch_add(1);
    if (end == WatchEnd::kGone) {
      spdlog::info("{}: resourceVersion {} expired; listing again", path_, resource_version_);
      need_list = true;
    } else if (end == WatchEnd::kFailed) {
      Backoff();
    }
  }
}

bool Reflector::List() {
  thread_local simdjson::ondemand::parser parser;
  thread_local simdjson::ondemand::parser item_parser;
  sink_.BeginList();
  std::string cont;
  std::string list_rv;
  do {
    HttpResult r = client_->Get(Query(path_, {"limit=" + std::to_string(options_.page_size),
                                              cont.empty() ? "" : "continue=" + UrlEncode(cont)}));
    if (!r.ok()) {
      spdlog::warn("{}: list failed: {}", path_,
                   r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error);
      return false;
    }
    Touch();
    cont.clear();
    try {
      simdjson::padded_string body(r.body);
      simdjson::ondemand::document doc = parser.iterate(body);
      for (field f : doc.get_object()) {
        std::string_view key = f.unescaped_key();
        if (key == "metadata") {
          for (field m : f.value().get_object()) {
            std::string_view mkey = m.unescaped_key();
            if (mkey == "resourceVersion") list_rv = std::string(ScalarText(m.value()));
            if (mkey == "continue") cont = std::string(ScalarText(m.value()));
          }
        } else if (key == "items") {
          value items = f.value();
          if (items.type() == json_type::null) continue;
          for (value item : items.get_array()) {
            // The item's own text, parsed on its own: a bad item cannot leave the page's
            // iteration midway. It lies inside `body`, whose padding follows the page.
            std::string_view raw;
            if (!Isolated("a listed item that is no object",
                          [&] { raw = item.get_object().value().raw_json().value(); })) {
              continue;
            }
            size_t capacity = body.size() + simdjson::SIMDJSON_PADDING -
                              static_cast<size_t>(raw.data() - body.data());
            Isolated("an unusable listed object", [&] {
              simdjson::ondemand::document item_doc =
                  item_parser.iterate(simdjson::padded_string_view(raw, capacity));
              sink_.AddListed(item_doc.get_object());
            });
          }
        }
      }
    } catch (const std::exception& e) {
      spdlog::warn("{}: undecodable list page: {}", path_, e.what());
      return false;
    }
  } while (!cont.empty() && !stop_);
  if (stop_) return false;
  sink_.EndList();
  resource_version_ = list_rv;
  backoff_ = options_.backoff_initial;
  lists_.fetch_add(1);
  Progress();
  synced_ = true;
  return true;
}

Reflector::WatchEnd Reflector::Watch() {
  thread_local simdjson::ondemand::parser parser;
  thread_local simdjson::ondemand::parser object_parser;
  bool gone = false;
  bool bad_event = false;
  auto on_line = [&](std::string_view line) {
    Touch();
    std::string type;
    std::string raw_object;
    if (!Isolated("a malformed watch event", [&] {
          simdjson::padded_string padded(line);
          simdjson::ondemand::document doc = parser.iterate(padded);
          for (field f : doc.get_object()) {
            std::string_view key = f.unescaped_key();
            if (key == "type") type = std::string(ScalarText(f.value()));
            if (key == "object") {
              object o = f.value().get_object();
              raw_object = std::string(o.raw_json().value());
            }
          }
        })) {
      Progress();
      return true;  // nothing to resume from but the events that follow
    }
    simdjson::padded_string object_text(raw_object);
    if (type == "ERROR") {
      int64_t code = 0;
      Isolated("a malformed ERROR event", [&] {
        simdjson::ondemand::document odoc = object_parser.iterate(object_text);
        code = StatusCode(odoc.get_object());
      });
      if (code == 410) gone = true;
      spdlog::warn("{}: watch ERROR event, code {}", path_, code);
      bad_event = code != 410;
      return false;
    }
    std::string rv;
    Isolated("an unusable watch event's object", [&] {
      simdjson::ondemand::document odoc = object_parser.iterate(object_text);
      object o = odoc.get_object();
      rv = ResourceVersionOf(o);
      if (type != "BOOKMARK") sink_.Apply(type, o);
    });
    if (!rv.empty()) resource_version_ = rv;
    Progress();
    return true;
  };
  std::chrono::seconds timeout = options_.watch_timeout;
  HttpResult r =
      client_->Stream(Query(path_, {"watch=true", "allowWatchBookmarks=true",
                                    "resourceVersion=" + UrlEncode(resource_version_),
                                    "timeoutSeconds=" + std::to_string(timeout.count())}),
                      on_line, stop_, timeout + std::chrono::seconds(30));
  if (gone || r.status == 410) return WatchEnd::kGone;
  if (bad_event || !r.error.empty() || r.status != 200) {
    if (!stop_) {
      spdlog::warn("{}: watch ended: {}", path_,
                   !r.error.empty() ? r.error : "HTTP " + std::to_string(r.status));
    }
    return WatchEnd::kFailed;
  }
  backoff_ = options_.backoff_initial;
  Progress();
  return WatchEnd::kClean;
}

}  // namespace gpusched
