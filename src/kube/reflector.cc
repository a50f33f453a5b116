#include "gpusched/kube/reflector.h"

#include <optional>

#include <spdlog/spdlog.h>

#include "gpusched/kube/api_query.h"
#include "gpusched/kube/line_splitter.h"

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

// Marks a first initial sync tried, however it ends.
struct AttemptedOnExit {
  explicit AttemptedOnExit(std::atomic<bool>& flag) : flag(flag) {}
  ~AttemptedOnExit() { flag = true; }
  std::atomic<bool>& flag;
};

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
    auto opened = std::chrono::steady_clock::now();
    WatchEnd end;
    if (need_list && options_.watch_list && !watch_list_refused_) {
      end = Watch(WatchPhase::kInitialEvents);
      // A refused watch-list is no attempt yet: the paged list that follows is the first one
      // (the live inventory publishes its first complete snapshot once every kind was tried).
      if (end != WatchEnd::kRefused) attempted_ = true;
      if (end == WatchEnd::kRefused) {
        RefuseWatchList();
        continue;  // a paged list at once: the server answered, it is not failing
      }
      need_list = !synced_since_list_request_;
    } else {
      if (need_list) {
        if (!List()) {
          if (!stop_) Backoff();
          continue;
        }
        need_list = false;
      }
      end = Watch(WatchPhase::kEvents);
    }
    if (stop_) break;
    watch_restarts_.fetch_add(1);
    if (end == WatchEnd::kGone) {
      spdlog::info("{}: resourceVersion {} expired; listing again", path_, resource_version_);
      need_list = true;
    }
    // However it ended, a watch that ends at once would otherwise be opened again (and a 410
    // listed again) hundreds of times a second; only one that ran well is re-opened at once.
    if (std::chrono::steady_clock::now() - opened >= options_.watch_ran_well) {
      backoff_ = options_.backoff_initial;
    } else {
      Backoff();
    }
  }
}

void Reflector::RefuseWatchList() {
  watch_list_refused_ = true;
  // A kind the server may well not serve (404 and the like) says so again when it is listed.
  auto level = options_.quiet_repeated_failures ? spdlog::level::debug : spdlog::level::info;
  spdlog::log(
      level,
      "{}: the API server does not stream an initial list (sendInitialEvents): {}; listing in "
      "pages instead, as long as gpusched runs",
      path_, watch_list_refusal_);
}

bool Reflector::Abandon(const std::string& why) {
  lists_abandoned_.fetch_add(1);
  spdlog::error(
      "{}: list abandoned after {}; listing again after a backoff (not ready until a list "
      "completes)",
      path_, why);
  return false;
}

bool Reflector::ListPageInto(const std::string& cont, ListPageDecoder& page, uint64_t listed) {
  bool too_many = false;
  std::string undecodable;
  auto on_data = [&](std::string_view bytes) {
    Touch();
    try {
      page.Feed(bytes);
    } catch (const DecodeError& e) {
      undecodable = e.what();
      return false;
    }
    too_many = listed + page.items() > options_.max_list_objects;
    return !too_many;
  };
  HttpResult r =
      client_->Stream(ApiQuery(path_, {"limit=" + std::to_string(options_.page_size),
                                       cont.empty() ? "" : "continue=" + UrlEncode(cont)}),
                      on_data, stop_, options_.client.request_timeout, /*gzip=*/true);
  if (too_many) {
    return Abandon("more than " + std::to_string(options_.max_list_objects) + " objects");
  }
  if (!undecodable.empty()) {
    spdlog::warn("{}: undecodable list page: {}", path_, undecodable);
    return false;
  }
  if (!r.ok()) {
    std::string failure = r.failure();
    if (!options_.quiet_repeated_failures) {
      spdlog::warn("{}: list failed: {}", path_, failure);
    } else if (failure != last_list_failure_) {
      spdlog::info(
          "{}: list failed: {} (listed again after a backoff, logged at debug while it "
          "fails the same way)",
          path_, failure);
    } else {
      spdlog::debug("{}: list failed: {}", path_, failure);
    }
    last_list_failure_ = std::move(failure);
    return false;
  }
  last_list_failure_.clear();
  return true;
}

bool Reflector::List() {
  AttemptedOnExit attempted{attempted_};
  sink_.BeginList();
  std::string cont;
  std::string list_rv;
  uint64_t pages = 0;
  uint64_t listed = 0;
  do {
    if (++pages > options_.max_list_pages) {
      return Abandon("more than " + std::to_string(options_.max_list_pages) + " pages");
    }
    ListPageDecoder page(sink_, skips_, options_.max_object_bytes);
    if (!ListPageInto(cont, page, listed)) return false;
    listed += page.items();
    try {
      ListPage meta = page.Finish();
      list_rv = std::move(meta.resource_version);
      cont = std::move(meta.continue_token);
    } catch (const DecodeError& e) {
      spdlog::warn("{}: undecodable list page: {}", path_, e.what());
      return false;
    }
  } while (!cont.empty() && !stop_);
  if (stop_) return false;
  EndList(list_rv);
  return true;
}

void Reflector::EndList(std::string resource_version) {
  sink_.EndList();
  resource_version_ = std::move(resource_version);
  lists_.fetch_add(1);
  Progress();
  synced_ = true;
}

Reflector::WatchEnd Reflector::Watch(WatchPhase phase) {
  // A watch-list is the initial list too: its ADDED events are the list's items up to the bookmark
  // that ends them, then it goes on as a watch from that bookmark's resourceVersion.
  const bool watch_list = phase == WatchPhase::kInitialEvents;
  if (watch_list) {
    synced_since_list_request_ = false;
    sink_.BeginList();
  }
  uint64_t listed = 0;
  bool gone = false;
  bool bad_event = false;
  bool too_many = false;
  bool unmarked_bookmark = false;
  int64_t error_code = 0;
  auto on_line = [&](std::string_view line) {
    WatchLine event = ApplyWatchLine(line, sink_, skips_, phase);
    if (event.kind == WatchLine::Kind::kError) {
      error_code = event.code;
      gone = event.code == 410;
      bad_event = !gone;
      // Among the initial events, an ERROR is most often the server's way to refuse watch-list.
      if (phase == WatchPhase::kEvents) {
        spdlog::warn("{}: watch ERROR event, code {}", path_, event.code);
      }
      return false;
    }
    if (phase == WatchPhase::kInitialEvents) {
      if (event.initial_events_end) {
        // Counted before EndList marks the reflector synced, so whoever sees it synced sees the
        // count.
        watch_lists_.fetch_add(1);
        EndList(event.resource_version);
        synced_since_list_request_ = true;
        phase = WatchPhase::kEvents;
        return true;
      }
      if (event.bookmark) {
        // The server went past its initial events without marking their end: it ignored
        // sendInitialEvents (every bookmark of a server that honours it comes after that one).
        unmarked_bookmark = true;
        return false;
      }
      too_many = ++listed > options_.max_list_objects;
      return !too_many;  // a list's progress is the list applied
    }
    if (!event.resource_version.empty()) resource_version_ = event.resource_version;
    Progress();
    return true;
  };
  LineSplitter lines(options_.max_object_bytes);
  auto on_data = [&](std::string_view bytes) {
    Touch();
    uint64_t oversized = lines.oversized();
    bool go_on = lines.Feed(bytes, on_line);
    for (; oversized < lines.oversized(); ++oversized) {
      skips_.Oversized("a watch event", options_.max_object_bytes);
      if (phase == WatchPhase::kEvents) Progress();
    }
    return go_on;
  };
  std::chrono::seconds timeout = watch_list
                                     ? std::max(options_.watch_timeout, options_.watch_list_timeout)
                                     : options_.watch_timeout;
  HttpResult r = client_->Stream(WatchQuery(watch_list, timeout), on_data, stop_,
                                 timeout + std::chrono::seconds(30));
  if (phase == WatchPhase::kInitialEvents && !stop_) {
    if (too_many) {
      Abandon("more than " + std::to_string(options_.max_list_objects) + " objects");
      return WatchEnd::kFailed;
    }
    if (unmarked_bookmark) {
      watch_list_refusal_ = "a bookmark before the one that ends the initial events";
      return WatchEnd::kRefused;
    }
    if (std::optional<std::string> refusal = WatchListRefusal(r, error_code, gone)) {
      watch_list_refusal_ = std::move(*refusal);
      return WatchEnd::kRefused;
    }
  }
  if (gone || r.status == 410) return WatchEnd::kGone;
  if (bad_event || !r.error.empty() || r.status != 200) {
    if (!stop_) {
      spdlog::warn("{}: watch ended: {}", path_, r.failure());
    }
    return WatchEnd::kFailed;
  }
  if (phase == WatchPhase::kEvents) Progress();
  return WatchEnd::kClean;
}

std::string Reflector::WatchQuery(bool watch_list, std::chrono::seconds timeout) const {
  std::string timeout_param = "timeoutSeconds=" + std::to_string(timeout.count());
  if (watch_list) {
    // No resourceVersion: the initial events are a consistent read of the current state.
    return ApiQuery(path_, {"watch=true", "allowWatchBookmarks=true", "sendInitialEvents=true",
                            "resourceVersionMatch=NotOlderThan", timeout_param});
  }
  return ApiQuery(path_, {"watch=true", "allowWatchBookmarks=true",
                          "resourceVersion=" + UrlEncode(resource_version_), timeout_param});
}

std::optional<std::string> Reflector::WatchListRefusal(const HttpResult& r, int64_t error_code,
                                                       bool gone) {
  // An API server without watch-list answers 400 or 422 (the parameter is not allowed), or a
  // stream holding one ERROR event (kube-apiserver over an etcd without progress notifications:
  // code 500). A server too old to know the parameter streams the objects and never the bookmark
  // that ends them, so a stream that ends cleanly before it is a refusal too (as is a plain
  // bookmark before it, caught as it arrives). What is no answer
  // about watch-list (auth, throttling, an unavailable server, a transport error) is retried.
  if (gone) return std::nullopt;
  if (r.status == 400 || r.status == 404 || r.status == 422) return r.failure();
  if (r.status == 200 && r.error.empty()) {
    if (error_code != 0) return "an ERROR event with code " + std::to_string(error_code);
    return std::string("the stream ended before the bookmark that ends the initial events");
  }
  return std::nullopt;
}

}  // namespace gpusched
