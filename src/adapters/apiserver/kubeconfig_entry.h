// Internal to the kubeconfig loader: reading one cluster or user entry's fields with messages
// that name the entry, and what each kind of entry adds to the config.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "adapters/apiserver/api_config.h"
#include "adapters/apiserver/kubeconfig_document.h"
#include "common/status.h"

namespace gfp::adapters::apiserver {

class EntryReader {
 public:
  // `kind` is "cluster" or "user"; `base_dir` resolves relative file paths.
  EntryReader(const NamedEntry& entry, const std::string& kind, std::filesystem::path base_dir);

  // `cluster "c"`, escaped: the start of every message about this entry.
  const std::string& what() const { return what_; }
  const std::filesystem::path& base_dir() const { return base_dir_; }
  Status Error(const std::string& message) const;

  // Present with a value: not absent, not null, not empty text (client-go's "unset").
  bool Has(const std::string& key) const;
  // The text of a field, "" when absent; an error when it is a map or a list.
  Result<std::string> Text(const std::string& key) const;
  // The bytes of `<data_key>` (base64) or of the file `<file_key>` names; nullopt when neither is
  // given; an error when both are, or when the data or file cannot be had.
  Result<std::optional<std::string>> DataOrFile(const std::string& data_key,
                                                const std::string& file_key) const;

 private:
  const NamedEntry& entry_;
  std::string what_;
  std::filesystem::path base_dir_;
};

// server, CA, tls-server-name; refuses insecure-skip-tls-verify, proxy-url, http.
Status ApplyCluster(const EntryReader& cluster, ApiServerConfig& config);
// Exactly one of token, tokenFile, client certificate + key; refuses exec, auth-provider, basic
// auth and impersonation.
Status ApplyUser(const EntryReader& user, ApiServerConfig& config);

}  // namespace gfp::adapters::apiserver
