// The extender over HTTPS and mutual TLS, with certificates made at test time: a client without a
// certificate or with one from another CA is refused; kube-scheduler's client settings from
// manifests/scheduler-config/extender-mtls.yaml work (CA, client certificate, the urlPrefix host
// checked against the server certificate, ALPN offering h2 as Go does); a rotated certificate is
// served without a restart, and a broken one leaves the last good one in force.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <yaml-cpp/yaml.h>

#include "gpusched/util/input_error.h"
#include "testing/test_support.h"

namespace gpusched::tls_server_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// What a client presents and checks, as in kube-scheduler's ExtenderTLSConfig.
struct ClientTls {
  std::string ca;                  // verify the server with this CA; empty: no verification
  std::string cert, key;           // client certificate; empty: none
  std::string host = "localhost";  // checked against the server certificate, sent as SNI
  bool offer_h2 = true;            // ALPN "h2,http/1.1" like Go's HTTP/2-enabled transport
};

struct Exchange {
  bool ok = false;
  std::string alpn;      // protocol the server selected; empty: none
  std::string response;  // raw HTTP response
};

// One HTTPS request to 127.0.0.1:port with raw OpenSSL, so every TLS detail is the test's choice.
Exchange Request(int port, const ClientTls& tls, const std::string& request) {
  Exchange out;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (!tls.ca.empty()) {
    SSL_CTX_load_verify_locations(ctx, tls.ca.c_str(), nullptr);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  if (!tls.cert.empty()) {
    SSL_CTX_use_certificate_chain_file(ctx, tls.cert.c_str());
    SSL_CTX_use_PrivateKey_file(ctx, tls.key.c_str(), SSL_FILETYPE_PEM);
  }
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  SSL* ssl = SSL_new(ctx);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    SSL_set_fd(ssl, fd);
    SSL_set_tlsext_host_name(ssl, tls.host.c_str());
    SSL_set1_host(ssl, tls.host.c_str());
    static const unsigned char kAlpn[] = "\x02h2\x08http/1.1";
    if (tls.offer_h2) SSL_set_alpn_protos(ssl, kAlpn, sizeof kAlpn - 1);
    if (SSL_connect(ssl) == 1) {
      const unsigned char* proto = nullptr;
      unsigned len = 0;
      SSL_get0_alpn_selected(ssl, &proto, &len);
      out.alpn.assign(reinterpret_cast<const char*>(proto), len);
      // Under TLS 1.3 a refused client certificate shows up at the first read, not in connect.
      if (SSL_write(ssl, request.data(), static_cast<int>(request.size())) > 0) {
        char buf[4096];
        int n = 0;
        while ((n = SSL_read(ssl, buf, sizeof buf)) > 0) out.response.append(buf, n);
        out.ok = out.response.starts_with("HTTP/1.1 ");
      }
    }
  }
  ERR_clear_error();
  SSL_free(ssl);
  ::close(fd);
  SSL_CTX_free(ctx);
  return out;
}

std::string Get(const std::string& path) {
  return "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
}

std::string Post(const std::string& path, const std::string& body) {
  return "POST " + path +
         " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
         "Content-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

class TlsServer : public ::testing::Test {
 protected:
  ServerOptions Options(bool client_ca) {
    ServerOptions o = testing::SampleServer::AnyPort();
    o.tls = TlsFiles{certs_.Path("server.crt"), certs_.Path("server.key"),
                     client_ca ? certs_.Path("ca.crt") : ""};
    o.tls_reload_interval = 20ms;
    return o;
  }
  ClientTls Trusted() {
    return {certs_.Path("ca.crt"), certs_.Path("client.crt"), certs_.Path("client.key")};
  }

  testing::TestCertificates certs_;
};

TEST_F(TlsServer, serves_https_without_client_certificates_when_no_client_ca_is_set) {
  testing::SampleServer server(Options(false));
  ClientTls anonymous{certs_.Path("ca.crt"), "", ""};
  Exchange e = Request(server.port(), anonymous, Get("/healthz"));
  EXPECT_TRUE(e.ok) << e.response;
  EXPECT_NE(e.response.find(" 200 "), std::string::npos);
  // A client that trusts another CA refuses the server.
  EXPECT_FALSE(Request(server.port(), {certs_.Path("other-ca.crt"), "", ""}, Get("/healthz")).ok);
}

TEST_F(TlsServer, mutual_tls_refuses_clients_without_a_certificate_or_from_another_ca) {
  testing::SampleServer server(Options(true));
  EXPECT_FALSE(Request(server.port(), {certs_.Path("ca.crt"), "", ""}, Get("/healthz")).ok);
  ClientTls foreign{certs_.Path("ca.crt"), certs_.Path("other-client.crt"),
                    certs_.Path("other-client.key")};
  EXPECT_FALSE(Request(server.port(), foreign, Get("/healthz")).ok);
  Exchange e = Request(server.port(), Trusted(), Get("/healthz"));
  EXPECT_TRUE(e.ok);
  EXPECT_NE(e.response.find(" 200 "), std::string::npos);
}

TEST_F(TlsServer, kube_scheduler_client_settings_from_the_example_configuration_work) {
  fs::path file = fs::path(GPUSCHED_SOURCE_DIR) / "manifests/scheduler-config/extender-mtls.yaml";
  YAML::Node e = YAML::LoadFile(file.string())["extenders"][0];
  ASSERT_TRUE(e["enableHTTPS"].as<bool>());
  std::string url = e["urlPrefix"].as<std::string>();
  ASSERT_TRUE(url.starts_with("https://")) << url;
  std::string host = url.substr(8, url.rfind(':') - 8);
  // The files kube-scheduler reads, mapped onto the ones made here by their base names.
  YAML::Node t = e["tlsConfig"];
  auto local = [&](const char* key) {
    std::string name = fs::path(t[key].as<std::string>()).filename().string();
    return certs_.Path(name);
  };
  ASSERT_EQ(fs::path(t["caFile"].as<std::string>()).filename(), "ca.crt");
  ClientTls scheduler{local("caFile"), local("certFile"), local("keyFile"), host, true};

  testing::SampleServer server(Options(true));
  std::string body = testing::Fixture("extender/filter-request-nodecache.json");
  Exchange x =
      Request(server.port(), scheduler, Post("/" + e["filterVerb"].as<std::string>(), body));
  ASSERT_TRUE(x.ok) << x.response;
  EXPECT_NE(x.response.find(" 200 "), std::string::npos) << x.response;
  EXPECT_NE(x.response.find("\"NodeNames\""), std::string::npos) << x.response;
  // Go offers h2 in ALPN; the server must not pick it, since it speaks HTTP/1.1 only.
  EXPECT_EQ(x.alpn, "");
}

TEST_F(TlsServer, a_rotated_certificate_is_served_without_restart_and_a_broken_one_is_ignored) {
  testing::SampleServer server(Options(true));
  ClientTls trusts_other{certs_.Path("other-ca.crt"), certs_.Path("client.crt"),
                         certs_.Path("client.key")};
  ASSERT_TRUE(Request(server.port(), Trusted(), Get("/healthz")).ok);
  ASSERT_FALSE(Request(server.port(), trusts_other, Get("/healthz")).ok);

  // Rotate to a certificate from other-ca: new temp files renamed over the old ones.
  certs_.Issue("rotated", "other-ca", "127.0.0.1", true);
  fs::rename(certs_.Path("rotated.key"), certs_.Path("server.key"));
  fs::rename(certs_.Path("rotated.crt"), certs_.Path("server.crt"));
  bool rotated = false;
  for (int i = 0; i < 250 && !rotated; ++i) {
    std::this_thread::sleep_for(20ms);
    rotated = Request(server.port(), trusts_other, Get("/healthz")).ok;
  }
  ASSERT_TRUE(rotated) << "the rotated certificate was never served";

  // A broken certificate file: the last good one stays in force.
  { std::ofstream(certs_.Path("server.crt")) << "not a certificate\n"; }
  std::this_thread::sleep_for(200ms);  // ten reload intervals
  EXPECT_TRUE(Request(server.port(), trusts_other, Get("/healthz")).ok);
}

TEST(TlsCredentialsLoad, names_the_file_that_is_missing_or_does_not_match) {
  testing::TestCertificates certs;
  try {
    TlsCredentials c(TlsFiles{certs.Path("nope.crt"), certs.Path("server.key"), ""}, 1s);
    FAIL() << "loaded a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.crt"), std::string::npos) << e.what();
  }
  try {
    TlsCredentials c(TlsFiles{certs.Path("server.crt"), certs.Path("client.key"), ""}, 1s);
    FAIL() << "accepted a key of another certificate";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not match"), std::string::npos) << e.what();
  }
  TlsCredentials ok(
      TlsFiles{certs.Path("server.crt"), certs.Path("server.key"), certs.Path("ca.crt")}, 10ms);
  { std::ofstream(certs.Path("server.crt")) << "garbage\n"; }
  for (int i = 0; i < 500 && ok.failures() == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(ok.failures(), 1u);
  EXPECT_EQ(ok.reloads(), 0u);
}

}  // namespace
}  // namespace gpusched::tls_server_test

namespace gpusched::tls_server_test {
namespace {

// Clients that connect and never start (or never finish) a TLS handshake hold no worker: the
// verbs stay answered, and the half-open handshakes are closed at the request timeout.
TEST_F(TlsServer, idle_handshakes_do_not_hold_the_server) {
  ServerOptions options = Options(true);
  options.request_timeout = std::chrono::milliseconds(500);
  testing::SampleServer server(options);
  std::vector<int> idle;
  for (int i = 0; i < 64; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    if (i % 2 == 1) {
      ASSERT_EQ(::send(fd, "\x16\x03\x01", 3, MSG_NOSIGNAL), 3);  // half a hello
    }
    idle.push_back(fd);
  }
  Exchange e = Request(server.port(), Trusted(), Get("/healthz"));
  EXPECT_TRUE(e.ok) << e.response;
  // Past the timeout the server has closed every one of them.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  for (int fd : idle) {
    char byte;
    pollfd p{fd, POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 2000), 1);
    EXPECT_LE(::recv(fd, &byte, 1, 0), 0);
    ::close(fd);
  }
}

}  // namespace
}  // namespace gpusched::tls_server_test
