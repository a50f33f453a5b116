#include "testing/test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "gpusched/app/process_setup.h"
#include "gpusched/cluster/cluster_ledger.h"
#include "gpusched/codec/k8s_decode.h"
#include "gpusched/inventory/static_inventory.h"

namespace gpusched::testing {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

LiveInventoryOptions FastLiveOptions(uint64_t seed) {
  LiveInventoryOptions o;
  o.reflector.watch_timeout = std::chrono::seconds(5);
  o.reflector.backoff_initial = std::chrono::milliseconds(5);
  o.reflector.backoff_max = std::chrono::milliseconds(100);
  o.reflector.client.stream_idle_timeout = std::chrono::seconds(2);
  o.reflector.client.request_timeout = std::chrono::seconds(5);
  o.publish_interval = std::chrono::milliseconds(5);
  o.seed = seed;
  return o;
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string BillionLaughsYaml() {
  std::string yaml = "a: &a [x,x,x,x,x,x,x,x,x]\n";
  for (char level = 'b'; level <= 'i'; ++level) {
    std::string previous = "*" + std::string(1, static_cast<char>(level - 1));
    yaml += std::string(1, level) + ": &" + level + " [" + previous;
    for (int i = 0; i < 8; ++i) yaml += "," + previous;
    yaml += "]\n";
  }
  return yaml;
}

std::string FixturePath(const std::string& relative) {
  return std::string(GPUSCHED_TEST_FIXTURES) + "/" + relative;
}

std::string Fixture(const std::string& relative) {
  return ReadFile(std::string(GPUSCHED_TEST_FIXTURES) + "/" + relative);
}

NodeInfo NodeFixture(const std::string& file) {
  Inventory inv = ParseInventory(Fixture("nodes/" + file), file);
  if (inv.nodes.size() != 1) throw std::runtime_error(file + ": expected one node");
  return inv.nodes[0];
}

NodeState MakeNode(const std::string& name, ResourceList allocatable, ResourceList used) {
  NodeState n;
  n.info.name = name;
  n.info.capacity = allocatable;
  n.info.allocatable = std::move(allocatable);
  n.used = std::move(used);
  return n;
}

PodInfo MakePod(const std::string& name, ResourceList requests) {
  PodInfo p;
  p.name = name;
  p.namespace_name = "default";
  p.uid = "uid-" + name;
  p.phase = PodPhase::kPending;
  p.requests = std::move(requests);
  return p;
}

NodeState LabeledNode(const std::string& name, int64_t gpus,
                      const std::vector<std::pair<std::string_view, std::string_view>>& labels) {
  NodeState n = MakeNode(name, ResourceList{{std::string(kGpuResource), Units(gpus)}});
  n.info.gpu = ParseGpuLabels(labels);
  n.info.pin_labels = PinLabels::Keep(labels);
  return n;
}

PodInfo PodFromJson(const std::string& json) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  simdjson::ondemand::document doc = parser.iterate(padded);
  return DecodePod(doc.get_object());
}

std::shared_ptr<const ClusterSnapshot> SampleSnapshot() {
  ClusterLedger ledger{GpuResourceNames()};
  ApplyInventory(ParseInventory(kSampleClusterYaml, "sample cluster"), ledger);
  return ledger.BuildSnapshot();
}

DisruptionBudget BudgetSelecting(const std::string& app, int32_t allowed, bool has_status) {
  DisruptionBudget b;
  b.namespace_name = "default";
  b.name = "pdb-" + app;
  b.selector.present = true;
  b.selector.requirements.push_back({"app", SelectorOperator::kIn, {app}});
  b.has_status = has_status;
  b.disruptions_allowed = allowed;
  return b;
}

std::shared_ptr<const ClusterSnapshot> SnapshotOf(const std::vector<NodeState>& nodes) {
  std::vector<ClusterSnapshot::NodePtr> ptrs;
  for (const auto& n : nodes) ptrs.push_back(std::make_shared<const NodeState>(n));
  return std::make_shared<const ClusterSnapshot>(std::move(ptrs), 1);
}

std::shared_ptr<FixedTally> TallyOf(DeviceModel devices, GpuMilliByProduct free) {
  return std::make_shared<FixedTally>(devices, std::move(free));
}

NodeState FixtureNode(const std::string& file, ResourceList used) {
  NodeState n;
  n.info = NodeFixture(file);
  n.used = std::move(used);
  return n;
}

TestCycle::TestCycle(PodInfo pod, std::shared_ptr<const ClusterSnapshot> snapshot)
    : pod_(std::move(pod)), snapshot_(snapshot ? std::move(snapshot) : SnapshotOf({})) {
  cycle_ = std::make_unique<Cycle>(pod_, GpuDemand(pod_, GpuResourceNames()), *snapshot_);
}

TestCycle::TestCycle(PodInfo pod, const PreparePlugin& prepared_by,
                     std::shared_ptr<const ClusterSnapshot> snapshot)
    : TestCycle(std::move(pod), std::move(snapshot)) {
  prepared_by.Prepare(*cycle_);
}

namespace {
ServerAppOptions ServingOn(ServerOptions server) {
  SetUpServingProcess();  // as gpusched serve does (SIGPIPE with TLS, one allocator arena)
  ServerAppOptions options;
  options.server = std::move(server);
  return options;
}
}  // namespace

SampleServer::SampleServer(ServerOptions options)
    : app_(ServingOn(std::move(options)), std::make_shared<const Policy>(DefaultPolicySpec()),
           MakeStaticSource(SampleSnapshot(), "test")),
      port_(app_.Bind()),
      thread_([this] { app_.Run(); }) {}

SampleServer::~SampleServer() {
  app_.Stop();
  thread_.join();
}

TestCertificates::TestCertificates() {
  char pattern[] = "/tmp/gpusched-certs-XXXXXX";
  if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  // As docs/operations.md's recipe makes it: the Service's DNS name and its ClusterIP (10.96.0.50
  // in manifests/scheduler-config/extender-mtls.yaml), here beside the loopback the tests use.
  std::ofstream(Path("san.ext"))
      << "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:gpusched.gpusched.svc,IP:10.96.0.50\n";
  for (const char* ca : {"ca", "other-ca"}) {
    Run(std::string("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=") + ca +
        " -keyout " + ca + ".key -out " + ca + ".crt");
  }
  Issue("server", "ca", "127.0.0.1", true);
  Issue("client", "ca", "kube-scheduler", false);
  Issue("other-client", "other-ca", "kube-scheduler", false);
}

TestCertificates::~TestCertificates() { std::filesystem::remove_all(dir_); }

void TestCertificates::Run(const std::string& command) const {
  std::string full = "cd " + dir_ + " && " + command + " > /dev/null 2>&1";
  if (std::system(full.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

void TestCertificates::Issue(const std::string& name, const std::string& issuer,
                             const std::string& subject, bool server) const {
  Run("openssl req -newkey rsa:2048 -nodes -subj /CN=" + subject + " -keyout " + name +
      ".key -out " + name + ".csr");
  Run("openssl x509 -req -in " + name + ".csr -CA " + issuer + ".crt -CAkey " + issuer +
      ".key -CAcreateserial -days 2 " + (server ? "-extfile san.ext " : "") + "-out " + name +
      ".crt");
}

}  // namespace gpusched::testing
