#include "gpusched/kube/reflector.h"

#include <spdlog/spdlog.h>

#include "gpusched/kube/api_query.h"

namespace gpusched {

Reflector::Reflector(std::string path, KubeConfig config, ReflectorSink& sink,
                     ReflectorOptions options, uint64_t seed)
    : path_(std::move(path)),
      sink_(sink),
      options_(options),
      client_(std::make_unique<ApiClient>(std::move(config), options.client)),
      backoff_(options.backoff_initial),
      rng_(seed),
      skips_(path_) {
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
  sink_.BeginList();
  std::string cont;
  std::string list_rv;
  do {
    HttpResult r =
        client_->Get(ApiQuery(path_, {"limit=" + std::to_string(options_.page_size),
                                      cont.empty() ? "" : "continue=" + UrlEncode(cont)}));
    if (!r.ok()) {
      spdlog::warn("{}: list failed: {}", path_,
                   r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error);
      return false;
    }
    Touch();
    cont.clear();
    try {
      ListPage page = ApplyListPage(simdjson::padded_string(r.body), sink_, skips_);
      list_rv = std::move(page.resource_version);
      cont = std::move(page.continue_token);
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
  bool gone = false;
  bool bad_event = false;
  auto on_line = [&](std::string_view line) {
    Touch();
    WatchLine event = ApplyWatchLine(line, sink_, skips_);
    if (event.kind == WatchLine::Kind::kError) {
      gone = event.code == 410;
      bad_event = !gone;
      spdlog::warn("{}: watch ERROR event, code {}", path_, event.code);
      return false;
    }
    if (!event.resource_version.empty()) resource_version_ = event.resource_version;
    Progress();
    return true;
  };
  std::chrono::seconds timeout = options_.watch_timeout;
  HttpResult r =
      client_->Stream(ApiQuery(path_, {"watch=true", "allowWatchBookmarks=true",
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
