#include "gpusched/kube/watch_stream.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpusched/codec/k8s_decode.h"
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
  ListPage page = ApplyListPage(simdjson::padded_string(body), sink, skips);
  EXPECT_EQ(sink.names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(page.resource_version, "9");
  EXPECT_EQ(page.continue_token, "c1");
  EXPECT_EQ(skips.invalid(), 2u);    // the quantity "two", containers of the wrong type
  EXPECT_EQ(skips.malformed(), 1u);  // a string where an object belongs
  EXPECT_THROW(ApplyListPage(simdjson::padded_string(std::string("[1,2]")), sink, skips),
               simdjson::simdjson_error);
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

}  // namespace
}  // namespace gpusched::watch_stream_test
