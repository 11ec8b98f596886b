#include "sim/apiserver/kubeconfig_writer.h"

#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <fstream>

namespace gfp::apisim {
namespace {

void EmitUser(YAML::Emitter& out, const KubeconfigCredential& credential) {
  out << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
  if (!credential.token_file.empty()) {
    out << YAML::Key << "tokenFile" << YAML::Value << credential.token_file.string();
  } else {
    out << YAML::Key << "client-certificate" << YAML::Value << credential.client_cert_file.string();
    out << YAML::Key << "client-key" << YAML::Value << credential.client_key_file.string();
  }
  out << YAML::EndMap;
}

}  // namespace

Status WriteKubeconfig(const std::filesystem::path& path, const std::string& server_url,
                       const std::filesystem::path& ca_file,
                       const KubeconfigCredential& credential) {
  const bool token = !credential.token_file.empty();
  const bool cert = !credential.client_cert_file.empty() && !credential.client_key_file.empty();
  if (token == cert) {
    return InvalidArgument("kubeconfig " + path.string() +
                           ": give either a token file or a client certificate and key");
  }
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Config";
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "fake";
  out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "server" << YAML::Value << server_url;
  out << YAML::Key << "certificate-authority" << YAML::Value << ca_file.string();
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "node";
  EmitUser(out, credential);
  out << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "fake";
  out << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "cluster" << YAML::Value << "fake";
  out << YAML::Key << "user" << YAML::Value << "node";
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "current-context" << YAML::Value << "fake";
  out << YAML::EndMap;
  {
    std::ofstream file(path, std::ios::trunc);
    file << out.c_str() << "\n";
    if (!file) return Internal("kubeconfig " + path.string() + ": cannot write it");
  }
  if (::chmod(path.c_str(), 0600) != 0) {
    return Internal("kubeconfig " + path.string() + ": cannot make it 0600");
  }
  return Status::Ok();
}

}  // namespace gfp::apisim
