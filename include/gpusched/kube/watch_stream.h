// What the API server streams to a reflector, decoded one piece at a time: a LIST page (its
// metadata, then every item) and a WATCH line (one event). Kept apart from the network so that
// the bytes an API server sends can be tested and fuzzed on their own.
//
// One bad object never stops a list or a watch: every item and every event's object is parsed on
// its own and handed to the sink inside ObjectSkips::Isolated, so an object the sink refuses
// (DecodeError: "invalid", or the bound it names: DecodeError::bound) or that is not an object of
// the expected shape ("malformed") is skipped, counted and logged, and the page or stream goes on.
// So is an object past the bound on one object's bytes (kDefaultMaxObjectBytes unless configured:
// "oversized"), and a watch event of a type the API does not define. Only a page whose envelope is
// not a list fails as a whole (the caller lists again).
//
// ObjectSkips is safe to read from any thread; the functions use thread-local parsers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/kube/refusal_counts.h"

namespace gpusched {

class ReflectorSink;

// The default bound on one object's JSON (a listed item, a watch line). kube-apiserver refuses
// request bodies over 3 MiB and etcd's default request limit is 1.5 MiB, so no object the API
// server stored is longer; the event envelope and fields the server adds fit in the margin.
inline constexpr size_t kDefaultMaxObjectBytes = 4 * 1024 * 1024;

// Counts and logs the objects skipped from one collection (`what`, e.g. "/api/v1/pods").
class ObjectSkips {
 public:
  explicit ObjectSkips(std::string what) : what_(what), refused_(std::move(what)) {}
  // Runs `decode`; when it throws DecodeError or a simdjson error, counts and logs the skip of
  // `object` (a few words) and returns false.
  template <class F>
  bool Isolated(std::string_view object, F&& decode);
  // Counts and logs the skip of `object`, which is not of the expected shape.
  void Malformed(std::string_view object, std::string_view error) {
    Skipped(object, malformed_, error);
  }
  // Counts and logs the skip of `object`, longer than `limit` bytes (never read whole).
  void Oversized(std::string_view object, size_t limit);
  uint64_t invalid() const { return invalid_.load(); }
  uint64_t malformed() const { return malformed_.load(); }
  uint64_t oversized() const { return oversized_.load(); }
  // Objects the sink refused for passing a bound, by the bound's reason (RefusalCounts).
  std::map<std::string_view, uint64_t> refused() const { return refused_.counts(); }

 private:
  void Skipped(std::string_view object, std::atomic<uint64_t>& counter, std::string_view error);
  std::string what_;
  std::atomic<uint64_t> invalid_{0};
  std::atomic<uint64_t> malformed_{0};
  std::atomic<uint64_t> oversized_{0};
  RefusalCounts refused_;
};

struct ListPage {
  std::string resource_version;
  std::string continue_token;  // empty on the last page
};
// Hands every item of the whole page `body` to sink.AddListed (gpusched/kube/list_page_decoder.h,
// which also takes a page as it arrives). Throws DecodeError when the envelope is not a list.
ListPage ApplyListPage(std::string_view body, ReflectorSink& sink, ObjectSkips& skips,
                       size_t max_object_bytes = kDefaultMaxObjectBytes);

struct WatchLine {
  enum class Kind {
    kHandled,  // applied, a bookmark, or skipped: the stream goes on
    kError,    // an ERROR event: the watch ends (status code in `code`; 410 means list again)
  };
  Kind kind = Kind::kHandled;
  std::string resource_version;  // of the event's object, when it has one
  int64_t code = 0;
  bool bookmark = false;
  // A BOOKMARK annotated k8s.io/initial-events-end: a watch-list's initial events are complete.
  bool initial_events_end = false;
};
// Where a watch stream stands. A watch-list (sendInitialEvents=true, KEP-3157) begins with one
// ADDED event per existing object, which are a list's items (sink.AddListed), up to the BOOKMARK
// that ends them; a plain watch, and a watch-list past that bookmark, apply every event.
enum class WatchPhase { kInitialEvents, kEvents };
// Applies one line of a watch stream (one JSON event) to `sink`. An event whose type is none of
// ADDED, MODIFIED, DELETED, BOOKMARK and ERROR is skipped as malformed, and so is one other than
// ADDED among a watch-list's initial events.
WatchLine ApplyWatchLine(std::string_view line, ReflectorSink& sink, ObjectSkips& skips,
                         WatchPhase phase = WatchPhase::kEvents);

template <class F>
bool ObjectSkips::Isolated(std::string_view object, F&& decode) {
  try {
    decode();
    return true;
  } catch (const DecodeError& e) {
    if (e.bound() != nullptr) {
      refused_.Add(e.bound(), object, e.what());
    } else {
      Skipped(object, invalid_, e.what());
    }
  } catch (const simdjson::simdjson_error& e) {
    Skipped(object, malformed_, simdjson::error_message(e.error()));
  }
  return false;
}

}  // namespace gpusched
