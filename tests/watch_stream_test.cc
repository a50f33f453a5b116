#include "gpusched/kube/watch_stream.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/kube/line_splitter.h"
#include "gpusched/kube/list_page_decoder.h"
#include "gpusched/kube/reflector.h"
#include "testing/test_support.h"

namespace gpusched::watch_stream_test {
namespace {

// Records the names of the pods it is handed, decoding them as the live inventory does.
struct PodNames : ReflectorSink {
  std::vector<std::string> names;
  void BeginList() override {}
  void AddListed(simdjson::ondemand::object o) override { names.push_back(DecodePod(o).name); }
  void EndList() override {}
  void Apply(std::string_view type, simdjson::ondemand::object o) override {
    names.push_back(std::string(type) + " " +
                    (type == "DELETED" ? DecodeIdentity(o) : DecodePod(o)).name);
  }
};

std::string Pod(const std::string& name, const std::string& gpus) {
  return R"({"metadata":{"name":")" + name + R"(","resourceVersion":"5"},"spec":{"containers":[)" +
         R"({"resources":{"limits":{"nvidia.com/gpu":")" + gpus + R"("}}}]}})";
}

TEST(WatchStream, a_list_page_goes_on_past_items_it_cannot_use) {
  PodNames sink;
  ObjectSkips skips("/api/v1/pods");
  std::string body = R"({"kind":"PodList","metadata":{"resourceVersion":"9","continue":"c1"},)"
                     R"("items":[)" +
                     Pod("a", "1") + "," + Pod("bad", "two") + R"(,"not an object",)" +
                     R"({"spec":{"containers":"x"}},)" + Pod("b", "10e15") + "]}";
  ListPage page = ApplyListPage(body, sink, skips);
  EXPECT_EQ(sink.names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(page.resource_version, "9");
  EXPECT_EQ(page.continue_token, "c1");
  EXPECT_EQ(skips.invalid(), 2u);    // the quantity "two", containers of the wrong type
  EXPECT_EQ(skips.malformed(), 1u);  // a string where an object belongs
  EXPECT_THROW(ApplyListPage("[1,2]", sink, skips), DecodeError);
}

TEST(WatchStream, watch_lines_skip_what_they_cannot_use_and_stop_only_on_error_events) {
  PodNames sink;
  ObjectSkips skips("/api/v1/pods");
  auto line = [&](const std::string& text) { return ApplyWatchLine(text, sink, skips); };
  EXPECT_EQ(line(R"({"type":"ADDED","object":)" + Pod("a", "2") + "}").resource_version, "5");
  WatchLine bad = line(R"({"type":"MODIFIED","object":)" + Pod("a", "two") + "}");
  EXPECT_EQ(bad.kind, WatchLine::Kind::kHandled);
  EXPECT_EQ(bad.resource_version, "5");  // the stream resumes past it
  EXPECT_EQ(line(R"({"type":"DELETED","object":)" + Pod("gone", "two") + "}").kind,
            WatchLine::Kind::kHandled);
  EXPECT_EQ(line("not json at all").kind, WatchLine::Kind::kHandled);
  EXPECT_EQ(line(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}})")
                .resource_version,
            "12");
  WatchLine gone = line(R"({"type":"ERROR","object":{"kind":"Status","code":410}})");
  EXPECT_EQ(gone.kind, WatchLine::Kind::kError);
  EXPECT_EQ(gone.code, 410);
  EXPECT_EQ(sink.names, (std::vector<std::string>{"ADDED a", "DELETED gone"}));
  EXPECT_EQ(skips.invalid(), 1u);
  EXPECT_EQ(skips.malformed(), 1u);
}

TEST(WatchStream, a_watch_lists_initial_events_are_list_items_up_to_the_marked_bookmark) {
  PodNames sink;
  ObjectSkips skips("/api/v1/pods");
  auto line = [&](const std::string& text) {
    return ApplyWatchLine(text, sink, skips, WatchPhase::kInitialEvents);
  };
  EXPECT_FALSE(line(R"({"type":"ADDED","object":)" + Pod("a", "1") + "}").bookmark);
  // Only ADDED events belong among the initial events.
  line(R"({"type":"MODIFIED","object":)" + Pod("b", "1") + "}");
  line(R"({"type":"DELETED","object":)" + Pod("c", "1") + "}");
  WatchLine plain = line(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7",)"
                         R"("annotations":{"k8s.io/initial-events-end":"false"}}}})");
  EXPECT_TRUE(plain.bookmark);
  EXPECT_FALSE(plain.initial_events_end);
  WatchLine end = line(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9",)"
                       R"("annotations":{"k8s.io/initial-events-end":"true"}}}})");
  EXPECT_TRUE(end.initial_events_end);
  EXPECT_EQ(end.resource_version, "9");
  EXPECT_EQ(sink.names, (std::vector<std::string>{"a"}));  // listed, not applied
  EXPECT_EQ(skips.malformed(), 2u);
  // The annotation means nothing on an object or past the initial events.
  EXPECT_FALSE(
      ApplyWatchLine(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})", sink,
                     skips)
          .initial_events_end);
  EXPECT_FALSE(line(R"({"type":"ADDED","object":{"metadata":{"name":"d","annotations":)"
                    R"({"k8s.io/initial-events-end":"true"}}}})")
                   .initial_events_end);
}

// A pod of about `bytes` bytes: a long annotation gpusched does not keep (issue #37 case 3).
std::string FatPod(const std::string& name, size_t bytes) {
  return R"({"metadata":{"name":")" + name + R"(","annotations":{"example.com/blob":")" +
         std::string(bytes, 'x') + R"("}},"spec":{"containers":[{"resources":{"limits":)" +
         R"({"nvidia.com/gpu":"1"}}}]}})";
}

// Feeds `text` to `feed` in chunks of `chunk` bytes, as a network would.
template <class F>
void InChunks(std::string_view text, size_t chunk, F&& feed) {
  for (size_t at = 0; at < text.size(); at += chunk) feed(text.substr(at, chunk));
}

TEST(WatchStream, a_list_page_costs_one_object_not_the_page) {
  PodNames sink;
  ObjectSkips skips("/api/v1/pods");
  std::string body = R"({"kind":"PodList","metadata":{"resourceVersion":"9","continue":"c\"2"},)"
                     R"("items":[)";
  for (int i = 0; i < 20; ++i) body += (i ? "," : "") + FatPod("p" + std::to_string(i), 1 << 20);
  body += R"(,[1,{"a":"]"}],"s",)" + FatPod("huge", 5 << 20) + "]}";
  ListPageDecoder page(sink, skips, kDefaultMaxObjectBytes);
  InChunks(body, 16 * 1024, [&](std::string_view bytes) { page.Feed(bytes); });
  ListPage meta = page.Finish();
  EXPECT_EQ(meta.resource_version, "9");
  EXPECT_EQ(meta.continue_token, "c\"2");
  EXPECT_EQ(sink.names.size(), 20u);
  EXPECT_EQ(page.items(), 23u);
  EXPECT_EQ(skips.malformed(), 2u);  // an array and a string where objects belong
  EXPECT_EQ(skips.oversized(), 1u);  // past 4 MiB: never gathered whole
  // A 26 MB page held one object at a time: at most the bound, and here one 1 MiB pod.
  EXPECT_LE(page.peak_buffer_bytes(), kDefaultMaxObjectBytes);
  EXPECT_GE(body.size(), 25u << 20);
}

TEST(WatchStream, a_list_page_that_is_no_list_fails_whole) {
  PodNames sink;
  ObjectSkips skips("/api/v1/pods");
  for (std::string bad : {R"({"items":{}})", R"({"items":[)", R"({"items":[]}])", R"({"items":[}})",
                          R"({"items":[]}} )", ""}) {
    EXPECT_THROW(ApplyListPage(bad, sink, skips), DecodeError) << bad;
  }
  EXPECT_EQ(ApplyListPage(R"({"items":null,"metadata":{"resourceVersion":7}})", sink, skips)
                .resource_version,
            "7");
}

TEST(WatchStream, a_watch_line_past_the_bound_is_dropped_as_it_arrives) {
  LineSplitter lines(1 << 20);
  std::vector<std::string> seen;
  auto on_line = [&](std::string_view line) {
    seen.emplace_back(line.substr(0, 8));
    return true;
  };
  std::string stream = "first\n" + std::string(64 << 20, 'x') + "\nsecond\nthi";
  InChunks(stream, 16 * 1024, [&](std::string_view bytes) { lines.Feed(bytes, on_line); });
  lines.Feed("rd\n\n", on_line);
  EXPECT_EQ(seen, (std::vector<std::string>{"first", "second", "third"}));
  EXPECT_EQ(lines.oversized(), 1u);
  // The 64 MiB line was never held: at most the bound.
  EXPECT_LE(lines.peak_buffer_bytes(), size_t{1} << 20);
}

TEST(WatchStream, events_of_unknown_types_are_skipped) {
  PodNames sink;
  ObjectSkips skips("/api/v1/pods");
  EXPECT_EQ(
      ApplyWatchLine(R"({"type":"SURPRISE","object":)" + Pod("a", "1") + "}", sink, skips).kind,
      WatchLine::Kind::kHandled);
  EXPECT_TRUE(sink.names.empty());
  EXPECT_EQ(skips.malformed(), 1u);
}

}  // namespace
}  // namespace gpusched::watch_stream_test
