#include "testing/raw_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

namespace gpusched::testing {

RawSocket::RawSocket(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

RawSocket::~RawSocket() { Close(); }

RawSocket::RawSocket(RawSocket&& other) noexcept
    : fd_(other.fd_), buffer_(std::move(other.buffer_)), closed_(other.closed_) {
  other.fd_ = -1;
}

void RawSocket::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawSocket::Send(std::string_view bytes) {
  while (fd_ >= 0 && !bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return fd_ >= 0;
}

std::optional<RawSocket::Response> RawSocket::Read(std::chrono::milliseconds timeout) {
  return ReadAnswer(true, timeout);
}

std::optional<RawSocket::Response> RawSocket::ReadHead(std::chrono::milliseconds timeout) {
  return ReadAnswer(false, timeout);
}

std::optional<RawSocket::Response> RawSocket::ReadAnswer(bool with_body,
                                                         std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    size_t end = buffer_.find("\r\n\r\n");
    if (end != std::string::npos) {
      Response r;
      r.headers = buffer_.substr(0, end + 2);
      r.status = std::atoi(r.headers.c_str() + 9);
      size_t cl = r.headers.find("Content-Length: ");
      size_t length =
          !with_body || cl == std::string::npos ? 0 : std::stoul(r.headers.substr(cl + 16));
      if (buffer_.size() >= end + 4 + length) {
        r.body = buffer_.substr(end + 4, length);
        buffer_.erase(0, end + 4 + length);
        return r;
      }
    }
    if (!Fill(deadline)) return std::nullopt;
  }
}

bool RawSocket::ClosedWithin(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  buffer_.clear();
  while (Fill(deadline)) buffer_.clear();
  return closed_;
}

bool RawSocket::Fill(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  pollfd p{fd_, POLLIN, 0};
  if (fd_ < 0 || left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
    return false;
  }
  char chunk[65536];
  ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
  if (n <= 0) {
    closed_ = true;
    return false;
  }
  buffer_.append(chunk, static_cast<size_t>(n));
  return true;
}

}  // namespace gpusched::testing
