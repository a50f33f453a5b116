#include "gpusched/kube/kube_config.h"

#include <cstdlib>
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "gpusched/codec/yaml_load.h"
#include "gpusched/util/file_text.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

std::string ReadFileOrThrow(const std::string& path, const std::string& what) {
  try {
    return ReadFileText(path, kMaxKubeconfigBytes, what);
  } catch (const FileError& e) {
    throw KubeConfigError(what + ": " + e.what());
  }
}

// Relative paths in a kubeconfig are relative to the kubeconfig's directory.
std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  return (std::filesystem::path(base_dir) / path).string();
}

YAML::Node Named(const YAML::Node& list, const std::string& name, const char* kind,
                 const std::string& file) {
  if (list.IsSequence()) {
    for (const auto& item : list) {
      if (item["name"] && item["name"].as<std::string>() == name) return item;
    }
  }
  throw KubeConfigError(file + ": no " + kind + " named \"" + QuoteForMessage(name) + "\"");
}

std::string Str(const YAML::Node& n) { return n && n.IsScalar() ? n.as<std::string>() : ""; }

}  // namespace

std::string Base64Decode(const std::string& text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int bits = 0;
  unsigned value = 0;
  for (char c : text) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
    size_t pos = kAlphabet.find(c);
    if (pos == std::string::npos) throw KubeConfigError("invalid base64 data");
    value = (value << 6) | static_cast<unsigned>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((value >> bits) & 0xff));
    }
  }
  return out;
}

bool RunningInCluster() { return std::getenv("KUBERNETES_SERVICE_HOST") != nullptr; }

KubeConfig InClusterConfig(const std::string& secrets_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !port) throw KubeConfigError("KUBERNETES_SERVICE_HOST/PORT are not set");
  KubeConfig c;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6 service address
  c.server = "https://" + h + ":" + port;
  c.token_file = secrets_dir + "/token";
  c.ca_pem = ReadFileOrThrow(secrets_dir + "/ca.crt", "service-account CA");
  ReadFileOrThrow(c.token_file, "service-account token");
  c.context = "in-cluster";
  return c;
}

namespace {

// The context `context` of the kubeconfig `root` read from `path`.
KubeConfig FromKubeconfig(const YAML::Node& root, const std::string& path,
                          const std::string& context) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  std::string name = context.empty() ? Str(root["current-context"]) : context;
  if (name.empty()) throw KubeConfigError(path + ": no current-context and no --context given");
  YAML::Node ctx = Named(root["contexts"], name, "context", path)["context"];
  YAML::Node cluster = Named(root["clusters"], Str(ctx["cluster"]), "cluster", path)["cluster"];
  KubeConfig c;
  c.context = name;
  c.server = Str(cluster["server"]);
  if (c.server.empty())
    throw KubeConfigError(path + ": cluster of context " + name + " has no server");
  c.insecure_skip_tls_verify = Str(cluster["insecure-skip-tls-verify"]) == "true";
  if (!Str(cluster["certificate-authority-data"]).empty()) {
    c.ca_pem = Base64Decode(Str(cluster["certificate-authority-data"]));
  } else if (!Str(cluster["certificate-authority"]).empty()) {
    c.ca_pem = ReadFileOrThrow(Resolve(dir, Str(cluster["certificate-authority"])), "CA");
  }
  if (ctx["user"] && !Str(ctx["user"]).empty()) {
    YAML::Node user = Named(root["users"], Str(ctx["user"]), "user", path)["user"];
    c.token = Str(user["token"]);
    if (!Str(user["tokenFile"]).empty()) c.token_file = Resolve(dir, Str(user["tokenFile"]));
    if (!Str(user["client-certificate-data"]).empty()) {
      c.client_cert_pem = Base64Decode(Str(user["client-certificate-data"]));
    } else if (!Str(user["client-certificate"]).empty()) {
      c.client_cert_pem =
          ReadFileOrThrow(Resolve(dir, Str(user["client-certificate"])), "client certificate");
    }
    if (!Str(user["client-key-data"]).empty()) {
      c.client_key_pem = Base64Decode(Str(user["client-key-data"]));
    } else if (!Str(user["client-key"]).empty()) {
      c.client_key_pem = ReadFileOrThrow(Resolve(dir, Str(user["client-key"])), "client key");
    }
  }
  return c;
}

}  // namespace

KubeConfig LoadKubeconfig(const std::string& path, const std::string& context) {
  try {
    return FromKubeconfig(LoadYaml(ReadFileOrThrow(path, "kubeconfig")), path, context);
  } catch (const YamlError& e) {
    throw KubeConfigError(YamlInputError(path, e));
  } catch (const YAML::Exception& e) {  // a value of the wrong type, such as a mapping for a name
    throw KubeConfigError(YamlInputError(path, e));
  }
}

}  // namespace gpusched
