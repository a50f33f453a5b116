#include "gpusched/server/http_request_parser.h"

#include <string>

#include <gtest/gtest.h>

namespace gpusched::http_request_parser_test {
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
  ASSERT_EQ(p.Feed("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nPOST /f HTTP/1.1\r\nHost: "
                   "a\r\nContent-Length: 2\r\n\r\n{}"),
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
  ASSERT_EQ(FeedByteByByte(p,
                           "POST /f HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n"),
            State::kComplete);
  EXPECT_EQ(p.request().body, "abcde");

  HttpRequestParser limited(Small());
  std::string chunks = "POST /f HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
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
      {"POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551616\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 65\r\n\r\n", 413},
      {"POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
       400},
      {"POST /f HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"POST /f HTTP/1.1\r\nHost: a\r\nContent-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx", 415},
      {"POST /f HTTP/1.1\r\nHost: a\r\nExpect: magic\r\n\r\n", 417},
      {"POST /f HTTP/2.0\r\n\r\n", 505},
      {"POST /f\r\n\r\n", 400},
      {"POST  /f HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nHost: a\r\nNo colon here\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nHost: a\r\n folded: x\r\n\r\n", 400},
      {"POST /f HTTP/1.1\r\nHost: a\r\nX: a\x01"
       "b\r\n\r\n",
       400},
      {"POST /f HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
      {"POST /f HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc", 400},
      {"POST /f HTTP/1.1\r\nHost: a\r\n" + std::string(300, 'X') + ": y\r\n\r\n", 431},
      {"POST /f HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nE: 1\r\nF: 1\r\nG: 1\r\nH: "
       "1\r\nI: "
       "1\r\n\r\n",
       431},
  };
  for (const auto& c : cases) {
    HttpRequestParser p(Small());
    EXPECT_EQ(p.Feed(c.bytes), State::kFailed) << c.bytes;
    EXPECT_EQ(p.error_status(), c.status) << c.bytes;
    EXPECT_FALSE(p.error().empty());
    EXPECT_EQ(p.error().find('\n'), std::string::npos);
    // A failed parser reads nothing more as requests.
    EXPECT_EQ(p.Feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), State::kFailed);
    EXPECT_EQ(p.Reset(), State::kFailed);
  }
}

TEST(HttpRequestParser, an_endless_header_fails_at_the_limit_not_at_the_end) {
  HttpRequestParser p(Small());
  State s = p.Feed("POST /f HTTP/1.1\r\nHost: a\r\n");
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
  ASSERT_EQ(close.Feed("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Close\r\n\r\n"),
            State::kComplete);
  EXPECT_FALSE(close.request().keep_alive);
  HttpRequestParser old(HttpLimits{});
  ASSERT_EQ(old.Feed("GET / HTTP/1.0\r\n\r\n"), State::kComplete);
  EXPECT_FALSE(old.request().keep_alive);
  HttpRequestParser old_kept(HttpLimits{});
  ASSERT_EQ(old_kept.Feed("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), State::kComplete);
  EXPECT_TRUE(old_kept.request().keep_alive);
  HttpRequestParser expect(HttpLimits{});
  EXPECT_EQ(expect.Feed(
                "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"),
            State::kNeedMore);
  EXPECT_TRUE(expect.header_complete());
  EXPECT_TRUE(expect.request().expects_continue);
  EXPECT_EQ(expect.Feed("{}"), State::kComplete);
}

TEST(HttpRequestParser, a_bare_lf_or_cr_fails_at_once_not_at_the_timeout) {
  // Each of these never completes a CRLF header: before, the parser waited for more bytes (408
  // after --request-timeout). Now the bare line end fails it as soon as it arrives.
  const std::string cases[] = {
      "GET /healthz HTTP/1.1\nHost: a\n\n",
      "GET /healthz HTTP/1.1\r\nHost: a\n\n",
      "GET /healthz HTTP/1.1\r\nHost: a\n",
      "\nGET /healthz HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",
  };
  for (const auto& bytes : cases) {
    for (bool slow : {false, true}) {
      HttpRequestParser p(HttpLimits{});
      EXPECT_EQ(slow ? FeedByteByByte(p, bytes) : p.Feed(bytes), State::kFailed) << bytes;
      EXPECT_EQ(p.error_status(), 400) << bytes;
    }
  }
  // The chunked framing too: a size line or the end of chunk data with a bare LF.
  for (const char* body : {"3\nabc", "3\r\nabc\n", "3\r\nabc\r\n0\r\nX: y\n"}) {
    HttpRequestParser p(HttpLimits{});
    EXPECT_EQ(
        p.Feed(std::string("POST /f HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n") +
               body),
        State::kFailed)
        << body;
    EXPECT_EQ(p.error_status(), 400) << body;
  }
  // A CR at the end of what arrived waits for its LF.
  HttpRequestParser split(HttpLimits{});
  EXPECT_EQ(split.Feed("GET /healthz HTTP/1.1\r"), State::kNeedMore);
  EXPECT_EQ(split.Feed("\nHost: a\r"), State::kNeedMore);
  EXPECT_EQ(split.Feed("\n\r\n"), State::kComplete);
}

TEST(HttpRequestParser, http11_needs_exactly_one_host_and_http10_at_most_one) {
  struct Case {
    std::string bytes;
    State state;
  };
  const Case cases[] = {
      {"GET / HTTP/1.1\r\n\r\n", State::kFailed},
      {"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", State::kFailed},
      {"GET / HTTP/1.1\r\nHost: a\r\nhOST: b\r\n\r\n", State::kFailed},
      {"GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", State::kFailed},
      {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", State::kComplete},
      {"GET / HTTP/1.1\r\nHOST:\r\n\r\n", State::kComplete},  // empty is allowed (RFC 9112 3.2)
      {"GET / HTTP/1.0\r\n\r\n", State::kComplete},
  };
  for (const auto& c : cases) {
    HttpRequestParser p(HttpLimits{});
    EXPECT_EQ(p.Feed(c.bytes), c.state) << c.bytes;
    if (c.state == State::kFailed) {
      EXPECT_EQ(p.error_status(), 400) << c.bytes;
      EXPECT_NE(p.error().find("Host"), std::string::npos) << p.error();
    }
  }
}

std::string LengthHeader(size_t length) {
  return "POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
}

// What holding `bytes` costs a budget: every request's first kFreeBytes are free.
size_t Charged(size_t bytes) {
  return bytes > RequestBudget::kFreeBytes ? bytes - RequestBudget::kFreeBytes : 0;
}

TEST(HttpRequestParser, a_content_length_body_is_held_whole_from_its_header_and_given_back) {
  RequestBudget budget(64 << 20);  // large requests may hold 56 MiB together
  HttpLimits limits{};
  limits.max_body_bytes = 32 << 20;
  {
    HttpRequestParser first(limits, &budget);
    EXPECT_EQ(first.Feed(LengthHeader(30 << 20)), State::kNeedMore);
    EXPECT_EQ(budget.used(), Charged(30 << 20));  // before a byte of the body arrived
    EXPECT_EQ(first.Feed(std::string(1 << 20, 'x')), State::kNeedMore);
    EXPECT_EQ(budget.used(), Charged(30 << 20));

    // A second large body does not fit beside it: 503 at its header, and what it held is back.
    HttpRequestParser second(limits, &budget);
    EXPECT_EQ(second.Feed(LengthHeader(27 << 20)), State::kFailed);
    EXPECT_EQ(second.error_status(), 503);
    EXPECT_NE(second.error().find("retry"), std::string::npos) << second.error();
    EXPECT_EQ(second.held(), 0u);
    EXPECT_EQ(budget.used(), Charged(30 << 20));

    // One that fits beside it (26 MiB: 56 MiB together) is taken.
    HttpRequestParser third(limits, &budget);
    EXPECT_EQ(third.Feed(LengthHeader(26 << 20)), State::kNeedMore);
    EXPECT_EQ(budget.used(), Charged(30 << 20) + Charged(26 << 20));

    // The last eighth stays for small requests: a 100 KiB body still passes beside them, and a
    // probe costs nothing.
    HttpRequestParser small(limits, &budget);
    EXPECT_EQ(small.Feed(LengthHeader(100 << 10)), State::kNeedMore);
    EXPECT_EQ(small.held(), Charged(100 << 10));
    EXPECT_EQ(small.Feed(std::string(100 << 10, 'x')), State::kComplete);
    EXPECT_EQ(small.request().body.size(), size_t{100} << 10);
    small.DropBody();
    EXPECT_EQ(small.held(), 0u);
    HttpRequestParser probe(limits, &budget);
    EXPECT_EQ(probe.Feed("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"), State::kComplete);
    EXPECT_EQ(probe.held(), 0u);

    // The first completes; its body is held until its handler is done with it.
    EXPECT_EQ(first.Feed(std::string((29 << 20) - 1, 'x')), State::kNeedMore);
    EXPECT_EQ(first.Feed("x"), State::kComplete);
    EXPECT_EQ(first.request().body.size(), size_t{30} << 20);
    EXPECT_EQ(first.held(), Charged(30 << 20));
    first.DropBody();
    EXPECT_EQ(first.held(), 0u);
    EXPECT_EQ(first.Reset(), State::kNeedMore);
  }
  // Destroyed parsers (closed connections) give back all they held.
  EXPECT_EQ(budget.used(), 0u);
}

TEST(RequestBudget, keeps_an_eighth_for_small_requests_unless_one_largest_body_needs_it) {
  constexpr size_t kMi = 1 << 20;
  EXPECT_EQ(RequestBudget(64 * kMi).large_request_limit(), 56 * kMi);
  EXPECT_EQ(RequestBudget(64 * kMi, 16 * kMi).large_request_limit(), 56 * kMi);
  EXPECT_EQ(RequestBudget(64 * kMi, 60 * kMi).large_request_limit(), 60 * kMi);
  EXPECT_EQ(RequestBudget(64 * kMi, 64 * kMi).large_request_limit(), 64 * kMi);
  EXPECT_EQ(RequestBudget(64 * kMi, 100 * kMi).large_request_limit(), 64 * kMi);
  RequestBudget budget(64 * kMi, 60 * kMi);
  EXPECT_TRUE(budget.Take(60 * kMi, 60 * kMi));  // the largest body fits an idle budget
  EXPECT_FALSE(budget.Take(2 * kMi, 2 * kMi));   // a second large one does not
  EXPECT_TRUE(budget.Take(kMi, kMi));            // a small one does
  EXPECT_FALSE(budget.Take(4 * kMi, kMi));       // not past the limit
  budget.Give(61 * kMi);
  EXPECT_EQ(budget.used(), 0u);
}

TEST(HttpRequestParser, headers_and_chunked_bodies_are_held_as_they_arrive) {
  RequestBudget budget(4 << 20);  // 3.5 MiB once a request is large
  HttpLimits limits{};
  limits.max_body_bytes = budget.large_request_limit();
  HttpRequestParser header(limits, &budget);
  const std::string head = "POST /f HTTP/1.1\r\nHost: a\r\nX: " + std::string(10 << 10, 'y');
  EXPECT_EQ(header.Feed(head), State::kNeedMore);  // no blank line yet
  EXPECT_EQ(budget.used(), Charged(head.size()));

  HttpRequestParser chunked(limits, &budget);
  EXPECT_EQ(chunked.Feed("POST /f HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"),
            State::kNeedMore);
  const std::string chunk = "100000\r\n" + std::string(1 << 20, 'x') + "\r\n";  // 1 MiB
  EXPECT_EQ(chunked.Feed(chunk), State::kNeedMore);
  EXPECT_EQ(chunked.Feed(chunk), State::kNeedMore);
  EXPECT_EQ(chunked.held(), Charged(2 << 20));
  EXPECT_EQ(chunked.Feed(chunk), State::kNeedMore);
  // A fourth would pass the 3.5 MiB large requests may hold with the others: 503.
  HttpRequestParser other(limits, &budget);
  EXPECT_EQ(other.Feed(LengthHeader(400 << 10)), State::kNeedMore);
  EXPECT_EQ(chunked.Feed(chunk), State::kFailed);
  EXPECT_EQ(chunked.error_status(), 503);
  EXPECT_EQ(budget.used(), Charged(head.size()) + Charged(400 << 10));
}

TEST(HttpRequestParser, a_pipelined_request_stays_held_after_the_first_is_answered) {
  RequestBudget budget(1 << 20);
  HttpRequestParser p(HttpLimits{}, &budget);
  const std::string second = LengthHeader(16 << 10) + std::string(16 << 10, 'x');
  ASSERT_EQ(p.Feed(LengthHeader(2) + "{}" + second), State::kComplete);
  p.DropBody();
  EXPECT_EQ(p.held(), Charged(second.size()));
  ASSERT_EQ(p.Reset(), State::kComplete);
  EXPECT_EQ(p.request().body.size(), size_t{16} << 10);
  p.DropBody();
  EXPECT_EQ(p.Reset(), State::kNeedMore);
  EXPECT_EQ(budget.used(), 0u);
}

}  // namespace
}  // namespace gpusched::http_request_parser_test
