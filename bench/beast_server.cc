#include "beast_server.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace gpusched::bench {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kFirstRead = 64 << 10;
constexpr size_t kReadChunk = 256 << 10;  // as our transport reads

// What our transport answers to the same failure; 0: close without an answer (the client left, or
// the deadline passed: tcp_stream has closed the socket then).
int FailureStatus(const beast::error_code& ec) {
  if (ec == http::error::header_limit) return 431;
  if (ec == http::error::body_limit) return 413;
  if (ec == http::error::end_of_stream || ec == http::error::partial_message) return 0;
  bool parse_error = &ec.category() == &http::make_error_code(http::error::bad_method).category();
  return parse_error ? 400 : 0;
}

// The parsed Beast request as our routes take it.
HttpRequest ToHttpRequest(http::request<http::string_body>&& message) {
  HttpRequest r;
  r.method = std::string(message.method_string());
  r.target = std::string(message.target());
  r.minor_version = static_cast<int>(message.version() % 10);
  for (const auto& field : message) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    r.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  r.keep_alive = message.keep_alive();
  r.body = std::move(message.body());
  return r;
}

struct Shared {
  TransportOptions options;
  HttpRoutes& routes;
  std::atomic<size_t> open{0};
};

// One connection: wait up to keep_alive for a first byte, then read the whole request within
// request_timeout, answer it through the routes, and start over while the connection is kept.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Shared& shared) : stream_(std::move(socket)), shared_(shared) {
    ++shared_.open;
    beast::error_code ec;
    stream_.socket().set_option(tcp::no_delay(true), ec);
    auto remote = stream_.socket().remote_endpoint(ec);
    if (!ec) peer_ = remote.address().to_string() + ":" + std::to_string(remote.port());
  }
  ~Session() { --shared_.open; }

  void Start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->Next(); });
  }

 private:
  void Next() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(shared_.options.limits.max_header_bytes));
    parser_->body_limit(shared_.options.limits.max_body_bytes);
    if (buffer_.size() > 0) return ReadRequest();  // pipelined
    stream_.expires_after(shared_.options.keep_alive);
    stream_.async_read_some(buffer_.prepare(kFirstRead),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->Close();
                              self->buffer_.commit(n);
                              self->ReadRequest();
                            });
  }

  // Beast's own read functions (http::async_read) read 64 KB at a time; our transport reads
  // 256 KB. To compare the HTTP machinery rather than the read size, the parser is fed here from
  // reads of kReadChunk, as Beast's documentation shows for custom reads (parser::put).
  void ReadRequest() {
    stream_.expires_after(shared_.options.request_timeout);
    ParseBuffered();
  }

  void ParseBuffered() {
    while (buffer_.size() > 0 && !parser_->is_done()) {
      beast::error_code ec;
      size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == http::error::need_more) break;
      if (ec) return OnRequest(ec);
      if (used == 0) break;
    }
    if (parser_->is_done()) return OnRequest({});
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->Close();  // left, or the deadline passed
                              self->buffer_.commit(n);
                              self->ParseBuffered();
                            });
  }

  void OnRequest(beast::error_code ec) {
    if (ec) {
      int status = FailureStatus(ec);
      if (status == 0) return Close();
      return Reply(shared_.routes.Failure(status, ec.message()), true, false);
    }
    HttpRequest request = ToHttpRequest(parser_->release());
    bool head = request.method == "HEAD";
    HttpResponse answer = shared_.routes.Answer(request, peer_);
    Reply(std::move(answer), !request.keep_alive || answer.close, head);
  }

  void Reply(HttpResponse answer, bool close, bool head) {
    response_ = {};
    response_.version(11);
    response_.result(static_cast<unsigned>(answer.status));
    response_.set(http::field::content_type, answer.content_type);
    if (!answer.allow.empty()) response_.set(http::field::allow, answer.allow);
    response_.content_length(answer.body_size());
    if (!head) {
      response_.body() = std::move(answer.body);
      if (answer.shared_tail) response_.body() += answer.shared_tail->substr(answer.shared_from);
    }
    response_.keep_alive(!close);
    stream_.expires_after(shared_.options.request_timeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this(), close](beast::error_code ec, size_t) {
                        if (ec || close) return self->Close();
                        self->Next();
                      });
  }

  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  Shared& shared_;
  std::string peer_ = "?";
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

struct BeastServer::Impl {
  Shared shared;  // before the io_context: sessions it destroys count down here
  asio::io_context io;
  tcp::acceptor acceptor{io};

  Impl(TransportOptions o, HttpRoutes& routes)
      : shared{std::move(o), routes}, io(std::max(1, shared.options.threads)) {}

  void Accept() {
    acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket s) {
      if (!ec) std::make_shared<Session>(std::move(s), shared)->Start();
      if (acceptor.is_open()) Accept();
    });
  }
};

BeastServer::BeastServer(TransportOptions options, HttpRoutes& routes)
    : impl_(std::make_unique<Impl>(std::move(options), routes)) {}

BeastServer::~BeastServer() { Stop(); }

int BeastServer::Bind() {
  const TransportOptions& o = impl_->shared.options;
  tcp::endpoint endpoint(asio::ip::make_address(o.host), static_cast<uint16_t>(o.port));
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
  impl_->Accept();
  return acceptor.local_endpoint().port();
}

void BeastServer::Run() {
  std::vector<std::thread> threads;
  for (int i = 1; i < impl_->shared.options.threads; ++i) {
    threads.emplace_back([this] { impl_->io.run(); });
  }
  impl_->io.run();
  for (auto& t : threads) t.join();
}

void BeastServer::Stop() { impl_->io.stop(); }

size_t BeastServer::connection_count() const { return impl_->shared.open.load(); }

}  // namespace gpusched::bench
