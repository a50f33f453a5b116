// Longer than 500 lines on purpose: the transport is one state machine over one epoll set, and
// its parts (accepting and the connection cap, the connection table, the deadline sweep, the
// request budget, the TLS handshake, the read and write turns) all work under Impl's one mutex and
// its rule for handing a connection between threads. Split over files, that lock and that rule
// would become a header every part includes. What stands apart already lives apart: the request
// parser (http_request_parser.h), the routes (http_routes.h) and the TLS files (tls_credentials.h).
#include "gpusched/server/http_transport.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include "gpusched/util/input_error.h"

namespace gpusched {
namespace {

using Clock = std::chrono::steady_clock;

// epoll tags below kFirstConnection name the transport's own descriptors.
constexpr uint64_t kListenTag = 0;
constexpr uint64_t kStopTag = 1;
constexpr uint64_t kSweepTag = 2;
constexpr uint64_t kFirstConnection = 16;

constexpr size_t kReadChunk = 256 << 10;
// Bytes read from one connection in one turn, so a fast sender of a huge body yields the thread.
constexpr size_t kMaxReadPerTurn = 4 << 20;
constexpr std::chrono::milliseconds kSweepPeriod{100};
// Once no request this large (or with an answer this large) has been answered for kTrimAfterQuiet,
// the next sweep calls `after_large_requests` (the app gives free heap pages back to the system
// there), so a burst of big bodies does not leave the process holding their memory.
constexpr size_t kLargeRequestBytes = 4 << 20;
constexpr std::chrono::seconds kTrimAfterQuiet{1};
// File descriptors kept free for everything but connections (logs, API watches, files).
constexpr rlim_t kReservedDescriptors = 128;

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

// How the connection goes on after an answer, as its Connection header says.
enum class Persist { kClose, kKeep, kKeepHttp10 };

std::string StatusHead(const HttpResponse& r, Persist persist) {
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " ";
  head.append(ReasonPhrase(r.status)).append("\r\nContent-Type: ").append(r.content_type);
  head.append("\r\nContent-Length: ").append(std::to_string(r.body_size())).append("\r\n");
  if (!r.allow.empty()) head.append("Allow: ").append(r.allow).append("\r\n");
  if (persist == Persist::kClose) head.append("Connection: close\r\n");
  // An HTTP/1.0 client keeps the connection only when told so (RFC 9112 9.3).
  if (persist == Persist::kKeepHttp10) head.append("Connection: keep-alive\r\n");
  return head.append("\r\n");
}

struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};

// An HTTPS context whose handshakes take their credentials from `tls`; null without TLS.
std::unique_ptr<SSL_CTX, SslCtxFree> MakeTlsContext(TlsCredentials* tls) {
  if (!tls) return nullptr;
  std::unique_ptr<SSL_CTX, SslCtxFree> ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) throw InputError("cannot set up TLS: OpenSSL made no server context");
  tls->Configure(*ctx);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                  SSL_MODE_RELEASE_BUFFERS);
  return ctx;
}

// A body the budget could never hold is too large (413), not a reason to retry later (503).
TransportOptions WithBodyWithinBudget(TransportOptions o) {
  o.limits.max_body_bytes = std::min(o.limits.max_body_bytes, o.max_inflight_bytes);
  return o;
}

enum class Phase { kHandshake, kReading, kWriting };
// What a connection waits for after its turn.
enum class Next { kRead, kWrite, kYield, kClose };
enum class Io { kDone, kWantRead, kWantWrite, kEof, kError, kMore };

struct Connection {
  Connection(uint64_t id, int fd, std::string peer, const HttpLimits& limits, RequestBudget* budget)
      : id(id), fd(fd), peer(std::move(peer)), budget(budget), parser(limits, budget) {}
  ~Connection() { ReleaseAnswer(); }
  // Drops the answer's buffers and gives its bytes back to the budget.
  void ReleaseAnswer() {
    head.clear();
    body = std::string();
    tail_owner.reset();
    tail = {};
    if (answer_charged > 0) budget->Give(answer_charged);
    answer_charged = 0;
  }
  size_t answer_size() const { return head.size() + body.size() + tail.size(); }

  uint64_t id;
  int fd;
  std::string peer;
  RequestBudget* budget;
  std::unique_ptr<SSL, SslFree> ssl;
  Phase phase = Phase::kReading;
  HttpRequestParser parser;
  std::string head;  // status line and headers being written
  std::string body;  // then this
  std::shared_ptr<const std::string> tail_owner;
  std::string_view tail;      // then this, in tail_owner
  size_t answer_charged = 0;  // bytes of `body` taken from the budget
  size_t written = 0;
  bool interim = false;  // the answer being written is "100 Continue"
  bool continue_sent = false;
  bool close_after_write = false;
  bool large = false;           // the answer being written is for a large request
  bool busy = false;            // a thread is serving it; guarded by the transport's mutex
  bool timing_request = false;  // `deadline` is the current request's
  Clock::time_point deadline;
  Clock::time_point last_active;  // admitted, or last answered: eviction closes the smallest
};

int MustFd(int fd, const char* what) {
  if (fd < 0) throw InputError(std::string(what) + ": " + std::strerror(errno));
  return fd;
}

// Raises the open-file limit to its hard maximum; returns the soft limit now in force.
rlim_t RaiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = std::min<rlim_t>(limit.rlim_max, 1 << 20);
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

std::string PeerName(const sockaddr_storage& addr) {
  char host[NI_MAXHOST] = "?";
  char port[NI_MAXSERV] = "?";
  getnameinfo(reinterpret_cast<const sockaddr*>(&addr), sizeof addr, host, sizeof host, port,
              sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
  return std::string(host) + ":" + port;
}

}  // namespace

struct HttpTransport::Impl {
  TransportOptions options;
  HttpHandlers handlers;
  std::unique_ptr<TlsCredentials> credentials;  // null: plain HTTP
  std::unique_ptr<SSL_CTX, SslCtxFree> tls;     // configured with `credentials`
  RequestBudget budget;  // before `connections`: their parsers give back to it when destroyed
  int epoll_fd = -1;
  int stop_fd = -1;
  int sweep_fd = -1;
  int listen_fd = -1;
  int spare_fd = -1;  // given up to accept-and-close a client when descriptors run out
  std::atomic<bool> stopping{false};
  std::atomic<bool> trim_pending{false};
  std::atomic<Clock::rep> last_large_done{0};

  mutable std::mutex mu;  // guards connections, next_id and every epoll_ctl on a connection
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections;
  uint64_t next_id = kFirstConnection;

  Impl(TransportOptions o, HttpHandlers h)
      : options(WithBodyWithinBudget(std::move(o))),
        handlers(std::move(h)),
        credentials(options.tls.cert.empty() ? nullptr
                                             : std::make_unique<TlsCredentials>(
                                                   options.tls, options.tls_reload_interval)),
        tls(MakeTlsContext(credentials.get())),
        budget(options.max_inflight_bytes, options.limits.max_body_bytes) {
    epoll_fd = MustFd(epoll_create1(EPOLL_CLOEXEC), "epoll_create1");
    stop_fd = MustFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd");
    sweep_fd = MustFd(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK), "timerfd");
    spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    Watch(stop_fd, kStopTag, EPOLLIN);  // level-triggered and never read: wakes every thread
    Watch(sweep_fd, kSweepTag, EPOLLIN | EPOLLONESHOT);
  }

  ~Impl() {
    for (auto& [id, c] : connections) close(c->fd);
    for (int fd : {listen_fd, spare_fd, sweep_fd, stop_fd, epoll_fd}) {
      if (fd >= 0) close(fd);
    }
  }

  void Watch(int fd, uint64_t tag, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = tag;
    MustFd(epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev), "epoll_ctl");
  }

  void Rearm(int fd, uint64_t tag, uint32_t events) {
    epoll_event ev{};
    ev.events = events | EPOLLONESHOT;
    ev.data.u64 = tag;
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &ev);
  }

  int Bind() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    std::string host = options.host;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    addrinfo* found = nullptr;
    std::string port = std::to_string(options.port);
    if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found)) {
      throw InputError("cannot resolve " + options.host + ": " + gai_strerror(rc));
    }
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, &freeaddrinfo);
    int fd = socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    MustFd(fd, "socket");
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, found->ai_addr, found->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
      std::string reason = std::strerror(errno);
      close(fd);
      throw InputError("cannot listen on " + options.host + ":" + port + ": " + reason);
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    listen_fd = fd;
    rlim_t limit = RaiseDescriptorLimit();
    rlim_t usable = limit > 2 * kReservedDescriptors ? limit - kReservedDescriptors : limit / 2;
    options.max_connections = std::min<size_t>(options.max_connections, usable);
    Watch(listen_fd, kListenTag, EPOLLIN | EPOLLONESHOT);
    return ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                             : reinterpret_cast<sockaddr_in&>(bound).sin_port);
  }

  void Run() {
    itimerspec period{};
    period.it_interval.tv_nsec = period.it_value.tv_nsec =
        std::chrono::duration_cast<std::chrono::nanoseconds>(kSweepPeriod).count();
    timerfd_settime(sweep_fd, 0, &period, nullptr);
    std::vector<std::thread> threads;
    for (int i = 1; i < options.threads; ++i) threads.emplace_back([this] { Loop(); });
    Loop();
    for (auto& t : threads) t.join();
    std::lock_guard lock(mu);
    for (auto& [id, c] : connections) close(c->fd);
    connections.clear();
  }

  void Stop() {
    stopping = true;
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(stop_fd, &one, sizeof one);
  }

  void Loop() {
    while (!stopping) {
      epoll_event ev{};
      int n = epoll_wait(epoll_fd, &ev, 1, -1);
      if (n <= 0 || stopping) continue;
      uint64_t tag = ev.data.u64;
      if (tag == kListenTag) {
        AcceptAll();
        Rearm(listen_fd, kListenTag, EPOLLIN);
      } else if (tag == kSweepTag) {
        uint64_t expirations = 0;
        [[maybe_unused]] ssize_t r = read(sweep_fd, &expirations, sizeof expirations);
        Sweep();
        Rearm(sweep_fd, kSweepTag, EPOLLIN);
      } else if (tag >= kFirstConnection) {
        Serve(tag, ev.events);
      }
    }
  }

  // ---- connections ------------------------------------------------------------------------

  void AcceptAll() {
    for (int i = 0; i < 256; ++i) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE) {
          if (!EvictIdle()) RefuseOne();
          continue;
        }
        return;  // EAGAIN: all taken
      }
      Admit(fd, addr);
    }
  }

  // Out of descriptors with nobody to evict: take the client with the spare descriptor and close
  // it, so it is told at once instead of waiting in the backlog.
  void RefuseOne() {
    if (spare_fd < 0) return;
    close(spare_fd);
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) close(fd);
    spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    spdlog::warn("refused a connection: out of file descriptors");
  }

  void Admit(int fd, const sockaddr_storage& addr) {
    int one = 1;
    // The answer's header and body go out in separate segments; without this Nagle holds the
    // body back for the client's delayed ACK.
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::unique_lock lock(mu);
    if (connections.size() >= options.max_connections && !EvictIdleLocked()) {
      lock.unlock();
      close(fd);
      spdlog::warn("refused a connection from {}: {} connections open, none idle", PeerName(addr),
                   options.max_connections);
      return;
    }
    auto c = std::make_unique<Connection>(next_id++, fd, PeerName(addr), options.limits, &budget);
    auto now = Clock::now();
    c->last_active = now;
    if (tls) {
      c->ssl.reset(SSL_new(tls.get()));
      if (!c->ssl || SSL_set_fd(c->ssl.get(), fd) != 1) {
        close(fd);
        return;
      }
      SSL_set_accept_state(c->ssl.get());
      c->phase = Phase::kHandshake;
      c->deadline = now + options.request_timeout;
    } else {
      c->deadline = now + options.keep_alive;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLONESHOT;
    ev.data.u64 = c->id;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      close(fd);
      return;
    }
    connections.emplace(c->id, std::move(c));
  }

  bool EvictIdle() {
    std::lock_guard lock(mu);
    return EvictIdleLocked();
  }

  // Closes the connection idle longest (no request under way, not being served).
  bool EvictIdleLocked() {
    Connection* oldest = nullptr;
    for (auto& [id, c] : connections) {
      if (c->busy || c->phase != Phase::kReading || c->parser.started()) continue;
      if (!oldest || c->last_active < oldest->last_active) oldest = c.get();
    }
    if (!oldest) return false;
    CloseLocked(oldest->id);
    return true;
  }

  void CloseLocked(uint64_t id) {
    auto it = connections.find(id);
    if (it == connections.end()) return;
    close(it->second->fd);  // also leaves the epoll set
    connections.erase(it);
  }

  // Closes connections past their deadline (a request cut short is told why when that is cheap),
  // then gives free memory back once a burst of large requests is over.
  void Sweep() {
    auto now = Clock::now();
    CloseExpired(now);
    // Not during a burst: a trim walks every free block of the heap (tens of thousands of madvise
    // calls with a large inventory) while holding the allocator's lock.
    if (trim_pending &&
        now - Clock::time_point(Clock::duration(last_large_done.load())) >= kTrimAfterQuiet) {
      trim_pending = false;
      if (options.after_large_requests) options.after_large_requests();
    }
  }

  void CloseExpired(Clock::time_point now) {
    std::lock_guard lock(mu);
    std::vector<uint64_t> expired;
    for (auto& [id, c] : connections) {
      if (!c->busy && now >= c->deadline) expired.push_back(id);
    }
    for (uint64_t id : expired) {
      Connection& c = *connections[id];
      if (c.phase == Phase::kReading && c.parser.started() && !c.ssl) {
        HttpResponse r = handlers.failure(408, "request not received in time", c.peer);
        std::string out = StatusHead(r, Persist::kClose) + r.body;
        [[maybe_unused]] ssize_t n =
            send(c.fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      CloseLocked(id);
    }
  }

  // One turn of a ready connection: taken from the table, served without the lock, handed back.
  void Serve(uint64_t id, uint32_t events) {
    Connection* c = nullptr;
    {
      std::lock_guard lock(mu);
      auto it = connections.find(id);
      if (it == connections.end() || it->second->busy) return;
      c = it->second.get();
      c->busy = true;
    }
    Next next = Next::kClose;
    try {
      if (!(events & EPOLLERR)) next = Drive(*c);
    } catch (const std::exception& e) {
      // Out of memory for one connection's buffers: that connection goes, the server stays.
      spdlog::error("closing the connection from {}: {}", c->peer, e.what());
    }
    std::lock_guard lock(mu);
    c->busy = false;
    if (next == Next::kClose || stopping) {
      CloseLocked(id);
      return;
    }
    uint32_t want =
        next == Next::kRead ? EPOLLIN : (next == Next::kWrite ? EPOLLOUT : EPOLLIN | EPOLLOUT);
    Rearm(c->fd, id, want);
  }

  Next Drive(Connection& c) {
    for (int step = 0; step < 8; ++step) {
      if (c.phase == Phase::kHandshake) {
        Io io = Handshake(c);
        if (io != Io::kDone) return Wait(io);
        c.phase = Phase::kReading;
        c.deadline = Clock::now() + options.keep_alive;
      }
      if (c.phase == Phase::kWriting) {
        Io io = Flush(c);
        if (io != Io::kDone) return Wait(io);
        if (c.large) {  // its buffers are all freed now
          last_large_done = Clock::now().time_since_epoch().count();
          trim_pending = true;
        }
        c.large = false;
        if (c.close_after_write) return Next::kClose;
        c.phase = Phase::kReading;
        auto written = Clock::now();
        if (c.interim) {
          c.interim = false;
          c.deadline = written + options.request_timeout;  // the body is still due
        } else {
          c.timing_request = false;
          c.continue_sent = false;
          c.deadline = written + options.keep_alive;
          if (c.parser.Reset() != HttpRequestParser::State::kNeedMore) {
            Respond(c);  // a pipelined request was already received whole
            continue;
          }
        }
      }
      Io io = c.parser.state() == HttpRequestParser::State::kNeedMore ? Read(c) : Io::kDone;
      if (c.parser.started() && !c.timing_request) {
        c.timing_request = true;
        c.deadline = Clock::now() + options.request_timeout;
      }
      if (c.parser.state() != HttpRequestParser::State::kNeedMore) {
        Respond(c);
        continue;
      }
      if (c.parser.header_complete() && c.parser.request().expects_continue && !c.continue_sent) {
        c.continue_sent = true;
        c.interim = true;
        c.head = "HTTP/1.1 100 Continue\r\n\r\n";
        c.written = 0;
        c.phase = Phase::kWriting;
        continue;
      }
      if (io == Io::kMore) return Next::kYield;
      return Wait(io);
    }
    return Next::kYield;  // served its share; more is waiting in its buffers
  }

  static Next Wait(Io io) {
    switch (io) {
      case Io::kWantRead:
        return Next::kRead;
      case Io::kWantWrite:
        return Next::kWrite;
      case Io::kMore:
        return Next::kYield;
      default:
        return Next::kClose;
    }
  }

  void Respond(Connection& c) {
    HttpResponse r;
    Persist persist = Persist::kClose;
    bool head_only = false;
    if (c.parser.state() == HttpRequestParser::State::kFailed) {
      spdlog::warn("rejected a request from {}: {} {}", c.peer, c.parser.error_status(),
                   c.parser.error());
      r = handlers.failure(c.parser.error_status(), c.parser.error(), c.peer);
    } else {
      HttpRequest& request = c.parser.request();
      c.large = request.body.size() >= kLargeRequestBytes;
      head_only = request.method == "HEAD";
      r = handlers.request(request, c.peer);
      c.large = c.large || r.body.size() >= kLargeRequestBytes;  // its buffers are as big
      if (request.keep_alive && !r.close) {
        persist = request.minor_version == 0 ? Persist::kKeepHttp10 : Persist::kKeep;
      }
      c.parser.DropBody();  // its memory and budget go now, not with the next request
    }
    if (!head_only && !HoldAnswer(c, r.body.size())) {
      r = DroppedAnswer(c.peer);
      persist = Persist::kClose;
    }
    c.head = StatusHead(r, persist);
    // A HEAD answer is the GET answer's head alone, its Content-Length included (RFC 9110 9.3.2).
    if (!head_only) {
      c.body = std::move(r.body);
      if (r.shared_tail && r.shared_from < r.shared_tail->size()) {
        c.tail_owner = std::move(r.shared_tail);
        c.tail = std::string_view(*c.tail_owner).substr(r.shared_from);
      }
    }
    c.written = 0;
    c.close_after_write = persist == Persist::kClose;
    c.phase = Phase::kWriting;
    // Idle time counts from the answer, not from the end of writing it: a client that waits for
    // one answer before opening its next connection then always finds them in that order, even
    // when the thread that wrote the first is descheduled before it finishes its bookkeeping.
    c.last_active = Clock::now();
    c.deadline = c.last_active + options.request_timeout;
  }

  // Takes the bytes of an answer body of `bytes` past the first RequestBudget::kFreeBytes from the
  // budget, as a request that large would; false when they do not fit.
  bool HoldAnswer(Connection& c, size_t bytes) {
    if (bytes <= RequestBudget::kFreeBytes) return true;
    size_t charge = bytes - RequestBudget::kFreeBytes;
    if (!budget.Take(charge, bytes)) return false;
    c.answer_charged = charge;
    return true;
  }

  HttpResponse DroppedAnswer(std::string_view peer) {
    std::string reason =
        "server busy: answers waiting for their readers and requests in flight "
        "hold its limit of " +
        std::to_string(budget.limit()) + " bytes; retry later";
    spdlog::warn("dropped the answer to {}: {}", peer, reason);
    HttpResponse r =
        handlers.dropped ? handlers.dropped(reason, peer) : handlers.failure(503, reason, peer);
    r.close = true;
    return r;
  }

  Io SslIo(Connection& c, int rc) {
    int error = SSL_get_error(c.ssl.get(), rc);
    ERR_clear_error();
    if (error == SSL_ERROR_WANT_READ) return Io::kWantRead;
    if (error == SSL_ERROR_WANT_WRITE) return Io::kWantWrite;
    if (error == SSL_ERROR_ZERO_RETURN) return Io::kEof;
    return Io::kError;
  }

  Io Handshake(Connection& c) {
    int rc = SSL_do_handshake(c.ssl.get());
    if (rc == 1) return Io::kDone;
    Io io = SslIo(c, rc);
    if (io == Io::kError) spdlog::debug("TLS handshake with {} failed", c.peer);
    return io;
  }

  // Reads what has arrived into the parser until it has a whole request, the socket is drained
  // (kWantRead), or this turn's share is used up (kMore).
  Io Read(Connection& c) {
    thread_local std::vector<char> buffer(kReadChunk);
    size_t total = 0;
    while (total < kMaxReadPerTurn) {
      ssize_t n;
      if (c.ssl) {
        n = SSL_read(c.ssl.get(), buffer.data(), static_cast<int>(buffer.size()));
        if (n <= 0) return SslIo(c, static_cast<int>(n));
      } else {
        n = recv(c.fd, buffer.data(), buffer.size(), 0);
        if (n == 0) return Io::kEof;
        if (n < 0) {
          if (errno == EINTR) continue;
          return errno == EAGAIN || errno == EWOULDBLOCK ? Io::kWantRead : Io::kError;
        }
      }
      total += static_cast<size_t>(n);
      if (c.parser.Feed({buffer.data(), static_cast<size_t>(n)}) !=
          HttpRequestParser::State::kNeedMore) {
        return Io::kDone;
      }
    }
    return Io::kMore;
  }

  // Writes the pending answer; kDone once all of it is out.
  Io Flush(Connection& c) {
    const size_t total = c.answer_size();
    while (c.written < total) {
      // The unwritten parts, in order: head, body, tail.
      iovec parts[3];
      int count = 0;
      size_t skip = c.written;
      for (std::string_view part : {std::string_view(c.head), std::string_view(c.body), c.tail}) {
        if (skip >= part.size()) {
          skip -= part.size();
          continue;
        }
        parts[count++] = {const_cast<char*>(part.data() + skip), part.size() - skip};
        skip = 0;
      }
      ssize_t n;
      if (c.ssl) {
        n = SSL_write(c.ssl.get(), parts[0].iov_base,
                      static_cast<int>(std::min<size_t>(parts[0].iov_len, 1 << 30)));
        if (n <= 0) return SslIo(c, static_cast<int>(n));
      } else {
        msghdr msg{};
        msg.msg_iov = parts;
        msg.msg_iovlen = static_cast<size_t>(count);
        n = sendmsg(c.fd, &msg, MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EINTR) continue;
          return errno == EAGAIN || errno == EWOULDBLOCK ? Io::kWantWrite : Io::kError;
        }
      }
      c.written += static_cast<size_t>(n);
    }
    c.ReleaseAnswer();
    return Io::kDone;
  }
};

size_t HttpResponse::body_size() const {
  return body.size() +
         (shared_tail && shared_from < shared_tail->size() ? shared_tail->size() - shared_from : 0);
}

HttpTransport::HttpTransport(TransportOptions options, HttpHandlers handlers)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handlers))) {}

HttpTransport::~HttpTransport() = default;

int HttpTransport::Bind() { return impl_->Bind(); }

void HttpTransport::Run() {
  if (impl_->listen_fd < 0) impl_->Bind();
  impl_->Run();
}

void HttpTransport::Stop() { impl_->Stop(); }

size_t HttpTransport::connection_count() const {
  std::lock_guard lock(impl_->mu);
  return impl_->connections.size();
}

}  // namespace gpusched
