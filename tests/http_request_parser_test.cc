#include "gpusched/server/http_request_parser.h"

#include <string>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

using State = HttpRequestParser::State;

HttpLimits Small() { return HttpLimits{256, 8, 64}; }

// Feeds `bytes` one at a time, as the slowest client would send them.
State FeedByteByByte(HttpRequestParser& p, std::string_view bytes) {
  State s = State::kNeedMore;
  for (char c : bytes) s = p.Feed(std::string_view(&c, 1));
  return s;
}

TEST(HttpRequestParser, reads_a_request_whole_or_byte_by_byte) {
  const std::string request =
      "POST /gpu/filter?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
      "Content-Length: 11\r\n\r\n{\"Pod\":{}}\n";
  for (bool slow : {false, true}) {
    HttpRequestParser p(HttpLimits{});
    State s = slow ? FeedByteByByte(p, request) : p.Feed(request);
    ASSERT_EQ(s, State::kComplete);
    EXPECT_EQ(p.request().method, "POST");
    EXPECT_EQ(p.request().path(), "/gpu/filter");
    EXPECT_EQ(p.request().header("content-type"), "application/json");
    EXPECT_EQ(p.request().body, "{\"Pod\":{}}\n");
    EXPECT_TRUE(p.request().keep_alive);
  }
}

TEST(HttpRequestParser, keeps_pipelined_bytes_for_the_next_request) {
  HttpRequestParser p(HttpLimits{});
  ASSERT_EQ(p.Feed("GET /healthz HTTP/1.1\r\n\r\nPOST /f HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"),
            State::kComplete);
  EXPECT_EQ(p.request().path(), "/healthz");
  ASSERT_EQ(p.Reset(), State::kComplete);
  EXPECT_EQ(p.request().method, "POST");
  EXPECT_EQ(p.request().body, "{}");
  EXPECT_EQ(p.Reset(), State::kNeedMore);
  EXPECT_FALSE(p.started());
}

TEST(HttpRequestParser, decodes_chunked_bodies_and_counts_the_limit_after_dechunking) {
  HttpRequestParser p(HttpLimits{});
  ASSERT_EQ(FeedByteByByte(p, "POST /f HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n"),
            State::kComplete);
  EXPECT_EQ(p.request().body, "abcde");

  HttpRequestParser limited(Small());
  std::string chunks = "POST /f HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 10; ++i) chunks += "10\r\n" + std::string(16, 'x') + "\r\n";
  EXPECT_EQ(limited.Feed(chunks), State::kFailed);
  EXPECT_EQ(limited.error_status(), 413);
}

TEST(HttpRequestParser, refuses_what_breaks_its_limits_or_framing) {
  struct Case {
    std::string bytes;
    int status;
  };
  const Case cases[] = {
      {"POST /f HTTP/1.1\r\nContent-Length: -5\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nContent-Length: 65\r\n\r\n", 413},
      {"POST /f HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"POST /f HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx", 415},
      {"POST /f HTTP/1.1\r\nExpect: magic\r\n\r\n", 417},
      {"POST /f HTTP/2.0\r\n\r\n", 505},
      {"POST /f\r\n\r\n", 400},
      {"POST  /f HTTP/1.1\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nNo colon here\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\n folded: x\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nX: a\x01" "b\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
      {"POST /f HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc", 400},
      {"POST /f HTTP/1.1\r\n" + std::string(300, 'X') + ": y\r\n\r\n", 431},
      {"POST /f HTTP/1.1\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nE: 1\r\nF: 1\r\nG: 1\r\nH: 1\r\nI: 1\r\n\r\n",
       431},
  };
  for (const auto& c : cases) {
    HttpRequestParser p(Small());
    EXPECT_EQ(p.Feed(c.bytes), State::kFailed) << c.bytes;
    EXPECT_EQ(p.error_status(), c.status) << c.bytes;
    EXPECT_FALSE(p.error().empty());
    EXPECT_EQ(p.error().find('\n'), std::string::npos);
    // A failed parser reads nothing more as requests.
    EXPECT_EQ(p.Feed("GET / HTTP/1.1\r\n\r\n"), State::kFailed);
    EXPECT_EQ(p.Reset(), State::kFailed);
  }
}

TEST(HttpRequestParser, an_endless_header_fails_at_the_limit_not_at_the_end) {
  HttpRequestParser p(Small());
  State s = p.Feed("POST /f HTTP/1.1\r\n");
  int lines = 0;
  while (s == State::kNeedMore && lines < 1000) {
    s = p.Feed("X: y\r\n");
    ++lines;
  }
  EXPECT_EQ(s, State::kFailed);
  EXPECT_LT(lines, 64);
}

TEST(HttpRequestParser, connection_and_version_decide_keep_alive_and_expect_is_seen) {
  HttpRequestParser close(HttpLimits{});
  ASSERT_EQ(close.Feed("GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n"), State::kComplete);
  EXPECT_FALSE(close.request().keep_alive);
  HttpRequestParser old(HttpLimits{});
  ASSERT_EQ(old.Feed("GET / HTTP/1.0\r\n\r\n"), State::kComplete);
  EXPECT_FALSE(old.request().keep_alive);
  HttpRequestParser old_kept(HttpLimits{});
  ASSERT_EQ(old_kept.Feed("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), State::kComplete);
  EXPECT_TRUE(old_kept.request().keep_alive);
  HttpRequestParser expect(HttpLimits{});
  EXPECT_EQ(expect.Feed("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"),
            State::kNeedMore);
  EXPECT_TRUE(expect.header_complete());
  EXPECT_TRUE(expect.request().expects_continue);
  EXPECT_EQ(expect.Feed("{}"), State::kComplete);
}

}  // namespace
}  // namespace gpusched
