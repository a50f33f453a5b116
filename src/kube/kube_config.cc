#include "gpusched/kube/kube_config.h"

#include <cstdlib>
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "gpusched/codec/yaml_load.h"
#include "gpusched/util/file_text.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

// The file at `path`, `what` ("client key") in front of the FileError's whole message.
std::string ReadFileOrThrow(const std::string& path, const std::string& what) {
  try {
    return ReadFileText(path, kMaxKubeconfigBytes, what);
  } catch (const FileError& e) {
    throw KubeConfigError(InContext(what, e));
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

// What the kubeconfig at `path` says or names at `key` (a base64 field, a file it names): `read`'s
// result, or its InputError with the kubeconfig and the key in front ("PATH: KEY: inner").
template <class F>
std::string AtKey(const std::string& path, const std::string& key, F&& read) {
  try {
    return read();
  } catch (const InputError& e) {
    throw KubeConfigError(InContext(path + ": " + key, e));
  }
}

// The PEM text an entry of the kubeconfig at `path` gives inline, base64 in `data_key`, or names as
// a file in `file_key` (relative to the kubeconfig's directory `dir`), `what` kind of file; empty
// when it gives neither. `entry` ("user \"NAME\"") and the key go in front of an error.
std::string Pem(const std::string& path, const std::string& dir, const std::string& entry,
                const YAML::Node& node, const std::string& data_key, const std::string& file_key,
                const std::string& what) {
  if (std::string data = Str(node[data_key]); !data.empty()) {
    return AtKey(path, entry + ": " + data_key, [&] { return Base64Decode(data); });
  }
  if (std::string file = Str(node[file_key]); !file.empty()) {
    return AtKey(path, entry + ": " + file_key,
                 [&] { return ReadFileOrThrow(Resolve(dir, file), what); });
  }
  return "";
}

// `kind` and `name` as a kubeconfig error names an entry: cluster "NAME".
std::string Entry(const char* kind, const std::string& name) {
  return std::string(kind) + " \"" + QuoteForMessage(name) + "\"";
}

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
  std::string cluster_entry = Entry("cluster", Str(ctx["cluster"]));
  c.ca_pem = Pem(path, dir, cluster_entry, cluster, "certificate-authority-data",
                 "certificate-authority", "CA");
  if (ctx["user"] && !Str(ctx["user"]).empty()) {
    YAML::Node user = Named(root["users"], Str(ctx["user"]), "user", path)["user"];
    std::string user_entry = Entry("user", Str(ctx["user"]));
    c.token = Str(user["token"]);
    if (!Str(user["tokenFile"]).empty()) c.token_file = Resolve(dir, Str(user["tokenFile"]));
    c.client_cert_pem = Pem(path, dir, user_entry, user, "client-certificate-data",
                            "client-certificate", "client certificate");
    c.client_key_pem =
        Pem(path, dir, user_entry, user, "client-key-data", "client-key", "client key");
  }
  return c;
}

}  // namespace

KubeConfig LoadKubeconfig(const std::string& path, const std::string& context) {
  try {
    return FromKubeconfig(LoadYaml(ReadFileOrThrow(path, "kubeconfig")), path, context);
  } catch (const YamlError& e) {
    throw KubeConfigError(YamlInputError(path, e));
  } catch (const YAML::Exception& e) {  // yaml-cpp throws (a mapping for a name); converted here
    throw KubeConfigError(YamlInputError(path, e));
  }
}

}  // namespace gpusched
