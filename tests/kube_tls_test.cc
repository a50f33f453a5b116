// The API client against an HTTPS API server, as in every real cluster: the CA from a file or from
// kubeconfig data, a client certificate and key from kubeconfig data, and a bearer token. The
// certificates are made at test time with the openssl command.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "gpusched/kube/live_inventory.h"
#include "testing/fake_apiserver.h"
#include "testing/test_support.h"

namespace gpusched::kube_tls_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::FakeApiServer;

std::string Base64(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int bits = 0;
  unsigned value = 0;
  for (unsigned char c : bytes) {
    value = (value << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(value >> bits) & 63];
    }
  }
  if (bits > 0) out += kAlphabet[(value << (6 - bits)) & 63];
  while (out.size() % 4) out += '=';
  return out;
}

class KubeTls : public ::testing::Test {
 protected:
  std::string File(const char* name) { return certs_.Path(name); }
  std::string Read(const char* name) { return testing::ReadFile(File(name)); }

  // A kubeconfig with the CA as a file path and the client certificate and key as data.
  std::string Kubeconfig(const FakeApiServer& server, const char* ca_file) {
    std::string path = File("kubeconfig.yaml");
    std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: tls\n"
                        << "clusters:\n- name: tls\n  cluster:\n    server: " << server.url()
                        << "\n    certificate-authority: " << ca_file << "\n"
                        << "users:\n- name: tls\n  user:\n"
                        << "    client-certificate-data: " << Base64(Read("client.crt")) << "\n"
                        << "    client-key-data: " << Base64(Read("client.key")) << "\n"
                        << "    token: " << FakeApiServer::kToken << "\n"
                        << "contexts:\n- name: tls\n  context:\n    cluster: tls\n    user: tls\n";
    return path;
  }

  testing::TestCertificates certs_;
};

bool Synced(LiveInventory& inventory, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (inventory.Status().synced) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

LiveInventoryOptions Quick() {
  LiveInventoryOptions o;
  o.reflector.backoff_initial = 10ms;
  o.reflector.backoff_max = 100ms;
  o.reflector.client.connect_timeout = std::chrono::seconds(2);
  return o;
}

TEST_F(KubeTls, syncs_over_https_with_a_client_certificate_and_the_ca_from_kubeconfig) {
  testing::FakeApiServerTls tls{File("server.crt"), File("server.key"), File("ca.crt")};
  FakeApiServer server(0, &tls);
  server.RequireToken(FakeApiServer::kToken);
  server.UpsertNode(testing::MakeGpuNode("n1", 8));
  server.UpsertPod(testing::MakeGpuPod("ns", "p", "uid-p", "n1", 3));
  KubeConfig config = LoadKubeconfig(Kubeconfig(server, "ca.crt"));  // relative to the kubeconfig
  EXPECT_FALSE(config.client_cert_pem.empty());
  EXPECT_FALSE(config.ca_pem.empty());
  Published<ClusterSnapshot> published;
  LiveInventory inventory(config, GpuResourceNames(), published, Quick());
  ASSERT_TRUE(Synced(inventory, 10000ms));  // synced: the published snapshot holds both lists
  auto snapshot = published.Get();
  ASSERT_NE(snapshot->Find("n1"), nullptr);
  EXPECT_EQ(snapshot->Find("n1")->used.units("nvidia.com/gpu"), 3);
}

TEST_F(KubeTls, refuses_a_server_whose_certificate_another_ca_signed) {
  testing::FakeApiServerTls tls{File("server.crt"), File("server.key"), ""};
  FakeApiServer server(0, &tls);
  server.UpsertNode(testing::MakeGpuNode("n1", 8));
  KubeConfig config = LoadKubeconfig(Kubeconfig(server, "other-ca.crt"));
  Published<ClusterSnapshot> published;
  LiveInventory inventory(config, GpuResourceNames(), published, Quick());
  EXPECT_FALSE(Synced(inventory, 1500ms));
  EXPECT_EQ(server.lists_served(), 0u);  // the TLS handshake failed before any request
}

TEST_F(KubeTls, a_server_that_requires_client_certificates_refuses_a_client_without_one) {
  testing::FakeApiServerTls tls{File("server.crt"), File("server.key"), File("ca.crt")};
  FakeApiServer server(0, &tls);
  KubeConfig config = LoadKubeconfig(Kubeconfig(server, "ca.crt"));
  config.client_cert_pem.clear();
  config.client_key_pem.clear();
  Published<ClusterSnapshot> published;
  LiveInventory inventory(config, GpuResourceNames(), published, Quick());
  EXPECT_FALSE(Synced(inventory, 1500ms));
}

TEST(KubeConfigInCluster, reads_the_service_account_directory) {
  fs::path dir = fs::temp_directory_path() / ("gpusched-sa-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "token") << "sa-token\n";
  std::ofstream(dir / "ca.crt") << "-----BEGIN CERTIFICATE-----\n";
  ::setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  KubeConfig c = InClusterConfig(dir.string());
  EXPECT_EQ(c.server, "https://10.96.0.1:443");
  EXPECT_EQ(c.token_file, (dir / "token").string());
  EXPECT_TRUE(RunningInCluster());
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  EXPECT_FALSE(RunningInCluster());
  EXPECT_THROW(InClusterConfig(dir.string()), KubeConfigError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpusched::kube_tls_test
