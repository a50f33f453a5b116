// How to reach the Kubernetes API server: in-cluster service-account settings, or a kubeconfig
// file (one context: server, CA, bearer token or client certificate).
//
// Certificates and keys are kept as PEM bytes (files are read, *-data fields base64-decoded). A
// token read from a file keeps its path so the client can re-read it when it rotates.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "gpusched/util/input_error.h"

namespace gpusched {

struct KubeConfig {
  std::string server;  // https://host:port (or http:// for tests)
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;
  std::string token;       // bearer token, when not read from a file
  std::string token_file;  // re-read when it changes (service-account tokens rotate)
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string context;  // where this came from, for logs
};

// Largest kubeconfig, and largest file one names (CA bundle, client certificate or key), read.
inline constexpr size_t kMaxKubeconfigBytes = size_t{16} << 20;

class KubeConfigError : public InputError {
 public:
  using InputError::InputError;
};

// From KUBERNETES_SERVICE_HOST/PORT and /var/run/secrets/kubernetes.io/serviceaccount/
// (`secrets_dir` overrides that directory for tests).
KubeConfig InClusterConfig(
    const std::string& secrets_dir = "/var/run/secrets/kubernetes.io/serviceaccount");
// True when KUBERNETES_SERVICE_HOST is set (we run in a pod).
bool RunningInCluster();
// The context `context` (current-context when empty) of the kubeconfig at `path`.
KubeConfig LoadKubeconfig(const std::string& path, const std::string& context = "");

std::string Base64Decode(const std::string& text);

}  // namespace gpusched
