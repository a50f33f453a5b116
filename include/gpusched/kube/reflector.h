// Reflector: keeps one resource kind (nodes or pods) in step with the API server.
//
// Its initial sync is a watch-list where the API server offers it (sendInitialEvents=true,
// KEP-3157, as client-go's informers make it): one watch stream whose ADDED events are the list's
// items up to a BOOKMARK marking their end, decoded one at a time, that goes on as a watch. A
// server that refuses it (400/422, an ERROR event among the initial events, or a stream that ends
// before that bookmark) is LISTed in pages (limit/continue) instead for the reflector's life, each
// page decoded as it arrives (gpusched/kube/list_page_decoder.h), then WATCHed from the list's
// resourceVersion. Either way the sink gets the complete list to replace what it knew, and the
// watch applies each event as it arrives and resumes from the last resourceVersion seen after a
// disconnect. "410 Gone" (as an HTTP status
// or an ERROR event) means the server compacted past that version: it LISTs again. A list that
// passes max_list_pages pages or max_list_objects objects is abandoned (logged, counted in
// lists_abandoned(); the reflector is not synced by it) and tried again after a backoff. A watch
// that stays silent past the client's idle limit is abandoned and resumed.
//
// Backoff, as client-go's: a failed list, and every watch that ends (410, an ERROR event, an
// empty or undecodable answer, a clean end) before it ran `watch_ran_well`, waits a jittered
// delay in [b/2, b] before the next request, b doubling from backoff_initial to backoff_max; a
// watch that ran that long resets b. Runs on its own thread; Stop() (or the destructor) ends it.
//
// One bad object never stops a list or a watch (gpusched/kube/watch_stream.h): it is skipped,
// counted and logged, and the list or watch goes on past it. Restarting a watch at the version
// before such an event would only meet it again. Progress (a list applied, an event handled, a
// watch that ended as the server meant it to) is timed, so a reflector that keeps failing shows as
// stale.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include <simdjson.h>

#include "gpusched/kube/api_client.h"
#include "gpusched/kube/list_page_decoder.h"
#include "gpusched/kube/watch_stream.h"

namespace gpusched {

// Where a reflector's objects go. Called from the reflector's thread only.
class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // A list is starting; Add() follows for each item, then EndList() (or a new BeginList() if
  // the list failed midway).
  virtual void BeginList() = 0;
  // Decodes one listed object.
  virtual void AddListed(simdjson::ondemand::object object) = 0;
  virtual void EndList() = 0;
  // A watch event (ADDED, MODIFIED, DELETED) for one object.
  virtual void Apply(std::string_view type, simdjson::ondemand::object object) = 0;
  // AddListed and Apply throw DecodeError for an object they cannot use; the reflector skips it.
};

struct ReflectorOptions {
  int page_size = 500;
  // One list's bounds: far above a cluster's 150,000 pods, reached only by a server that never
  // ends its list (a continue token on every page).
  uint64_t max_list_pages = 3000;
  uint64_t max_list_objects = 1000000;
  // A listed item or watch line longer than this is skipped and counted (watch_stream.h).
  size_t max_object_bytes = kDefaultMaxObjectBytes;
  // The initial sync as a watch-list where the server offers it (false: always in pages).
  bool watch_list = true;
  // timeoutSeconds of a watch-list: its initial events must arrive within it (a cluster of 150,000
  // pods streams about 300 MB), then it goes on as a watch until then.
  std::chrono::seconds watch_list_timeout{600};
  // A watch that lasted this long resets the backoff; shorter ones wait before the next request.
  std::chrono::milliseconds watch_ran_well{10000};
  // Asked of the server (timeoutSeconds): a quiet cluster still shows progress this often.
  std::chrono::seconds watch_timeout{60};
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{30000};
  // For a kind the server may well not serve (a CRD not installed, an alpha API off): a failed
  // list is logged at info, and at debug while each next one fails the same way, instead of a
  // warning every backoff_max for as long as gpusched runs.
  bool quiet_repeated_failures = false;
  ApiClientOptions client;
};

class Reflector {
 public:
  // `path` is the collection, e.g. "/api/v1/nodes". Starts the thread at once.
  Reflector(std::string path, KubeConfig config, ReflectorSink& sink, ReflectorOptions options,
            uint64_t seed);
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Asks the thread to end without waiting; an open watch notices within about a second (libcurl's
  // progress callback), so callers stopping several reflectors ask all of them first.
  void RequestStop();
  // RequestStop(), then waits for the thread.
  void Stop();
  // True once a complete list has been applied.
  bool synced() const { return synced_.load(); }
  // True once a first list has ended, applied or failed (a server that serves no such resource
  // answers 404; one that forbids it, 403).
  bool attempted() const { return attempted_.load(); }
  // When the server last answered (a list page, an event, a bookmark).
  std::chrono::steady_clock::time_point last_contact() const;
  // When the reflector last made progress: a complete list applied, an event handled (skipped
  // counts), a watch ended cleanly. A failing list or watch makes contact but no progress.
  std::chrono::steady_clock::time_point last_progress() const;
  // Objects skipped because the sink refused them (`invalid`) or they were not objects of the
  // expected shape (`malformed`).
  uint64_t skipped_invalid() const { return skips_.invalid(); }
  uint64_t skipped_malformed() const { return skips_.malformed(); }
  // Objects skipped for their size (longer than max_object_bytes).
  uint64_t skipped_oversized() const { return skips_.oversized(); }
  // Objects skipped for passing a bound the sink keeps, by reason (ObjectSkips::refused).
  std::map<std::string_view, uint64_t> skipped_refused() const { return skips_.refused(); }
  // Lists given up past max_list_pages or max_list_objects.
  uint64_t lists_abandoned() const { return lists_abandoned_.load(); }
  // Complete initial lists applied, in pages or as a watch-list; watch_lists() counts the latter.
  uint64_t lists() const { return lists_.load(); }
  uint64_t watch_lists() const { return watch_lists_.load(); }
  // True once the server refused a watch-list: this reflector lists in pages from then on.
  bool watch_list_refused() const { return watch_list_refused_.load(); }
  uint64_t watch_restarts() const { return watch_restarts_.load(); }
  const std::string& path() const { return path_; }

 private:
  // kRefused: the server does not offer a watch-list (WatchListRefusal).
  enum class WatchEnd { kClean, kGone, kFailed, kRefused };
  void Run();
  bool List();
  // Hands the list to the sink and marks the reflector synced at `resource_version`.
  void EndList(std::string resource_version);
  // Counts and logs a list given up for its size; returns false.
  bool Abandon(const std::string& why);
  // Streams one page into `page`; false when the list must be given up (logged).
  bool ListPageInto(const std::string& cont, ListPageDecoder& page, uint64_t listed);
  // A watch from resource_version_ (kEvents), or a watch-list that is the initial sync first
  // (kInitialEvents).
  WatchEnd Watch(WatchPhase phase);
  std::string WatchQuery(bool watch_list, std::chrono::seconds timeout) const;
  // Why the answer to a watch-list says the server does not offer it; nullopt when it says
  // nothing about that (a transport error, 401/403/429/5xx, 410).
  static std::optional<std::string> WatchListRefusal(const HttpResult& r, int64_t error_code,
                                                     bool gone);
  void RefuseWatchList();
  void Backoff();
  void Touch();
  void Progress();

  std::string path_;
  ReflectorSink& sink_;
  ReflectorOptions options_;
  std::unique_ptr<ApiClient> client_;
  std::string resource_version_;
  std::string last_list_failure_;  // empty after a list that did not fail this way
  std::chrono::milliseconds backoff_;
  std::mt19937_64 rng_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<bool> attempted_{false};
  std::atomic<int64_t> last_contact_ns_{0};
  std::atomic<int64_t> last_progress_ns_{0};
  ObjectSkips skips_;
  std::atomic<uint64_t> lists_{0};
  std::atomic<uint64_t> watch_lists_{0};
  std::atomic<bool> watch_list_refused_{false};
  std::string watch_list_refusal_;  // what the server answered, for the log
  // Whether the last watch-list reached the end of its initial events.
  bool synced_since_list_request_ = false;
  std::atomic<uint64_t> watch_restarts_{0};
  std::atomic<uint64_t> lists_abandoned_{0};
  std::mutex mu_;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace gpusched
