#include "gpusched/kube/watch_stream.h"

#include <spdlog/spdlog.h>

#include "gpusched/codec/ondemand_types.h"
#include "gpusched/util/quote.h"

#include "gpusched/kube/list_page_decoder.h"
#include "gpusched/kube/reflector.h"

namespace gpusched {
namespace {

using namespace ondemand_types;  // NOLINT(google-build-using-namespace)

// What a watch stream reads of an event's object's metadata.
struct EventMeta {
  std::string resource_version;
  bool initial_events_end = false;  // annotated k8s.io/initial-events-end: "true"
};

// The annotation marking the bookmark that ends a watch-list's initial events.
constexpr std::string_view kInitialEventsEnd = "k8s.io/initial-events-end";

// metadata.resourceVersion of `o`, and (for a bookmark) its initial-events-end annotation
// (iteration restarts from the beginning afterwards).
EventMeta MetaOf(object o, bool bookmark) {
  EventMeta meta;
  for (field f : o) {
    if (f.unescaped_key().value() != "metadata") continue;
    for (field m : f.value().get_object()) {
      std::string_view key = m.unescaped_key().value();
      if (key == "resourceVersion") meta.resource_version = std::string(ScalarText(m.value()));
      if (key != "annotations" || !bookmark) continue;
      for (field a : m.value().get_object()) {
        if (a.unescaped_key().value() == kInitialEventsEnd) {
          meta.initial_events_end = ScalarText(a.value()) == "true";
        }
      }
    }
  }
  o.reset();
  return meta;
}

// The code of a v1.Status object, 0 if absent.
int64_t StatusCode(object o) {
  int64_t code = 0;
  for (field f : o) {
    if (f.unescaped_key().value() == "code") code = f.value().get_int64();
  }
  return code;
}

bool IsKnownEventType(std::string_view type) {
  return type == "ADDED" || type == "MODIFIED" || type == "DELETED" || type == "BOOKMARK";
}

}  // namespace

void ObjectSkips::Oversized(std::string_view object, size_t limit) {
  Skipped(object, oversized_, "longer than " + std::to_string(limit) + " bytes");
}

void ObjectSkips::Skipped(std::string_view object, std::atomic<uint64_t>& counter,
                          std::string_view error) {
  uint64_t n = counter.fetch_add(1) + 1;
  // A hostile user may create many such objects: the log names the first few, then counts.
  if (n <= 10 || n % 1000 == 0) {
    spdlog::warn("{}: skipped {} ({} so far of this kind): {}", what_, object, n, error);
  }
}

ListPage ApplyListPage(std::string_view body, ReflectorSink& sink, ObjectSkips& skips,
                       size_t max_object_bytes) {
  ListPageDecoder page(sink, skips, max_object_bytes);
  page.Feed(body);
  return page.Finish();
}

WatchLine ApplyWatchLine(std::string_view line, ReflectorSink& sink, ObjectSkips& skips,
                         WatchPhase phase) {
  thread_local simdjson::ondemand::parser parser;
  thread_local simdjson::ondemand::parser object_parser;
  WatchLine out;
  std::string type;
  std::string raw_object;
  if (!skips.Isolated("a malformed watch event", [&] {
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
    return out;  // nothing to resume from but the events that follow
  }
  simdjson::padded_string object_text(raw_object);
  if (type == "ERROR") {
    out.kind = WatchLine::Kind::kError;
    skips.Isolated("a malformed ERROR event", [&] {
      simdjson::ondemand::document odoc = object_parser.iterate(object_text);
      out.code = StatusCode(odoc.get_object());
    });
    return out;
  }
  if (!IsKnownEventType(type)) {
    skips.Malformed("a watch event", "unknown type " + QuoteForMessage(type, 32));
    return out;
  }
  bool initial = phase == WatchPhase::kInitialEvents;
  if (initial && type != "ADDED" && type != "BOOKMARK") {
    skips.Malformed("a watch event", QuoteForMessage(type, 32) +
                                         " among a watch-list's initial "
                                         "events, which are ADDED events only");
    return out;
  }
  skips.Isolated("an unusable watch event's object", [&] {
    simdjson::ondemand::document odoc = object_parser.iterate(object_text);
    object o = odoc.get_object();
    bool bookmark = type == "BOOKMARK";
    EventMeta meta = MetaOf(o, bookmark);
    out.resource_version = std::move(meta.resource_version);
    out.bookmark = bookmark;
    out.initial_events_end = bookmark && meta.initial_events_end;
    if (bookmark) return;
    if (initial) {
      sink.AddListed(o);
    } else {
      sink.Apply(type, o);
    }
  });
  return out;
}

}  // namespace gpusched
