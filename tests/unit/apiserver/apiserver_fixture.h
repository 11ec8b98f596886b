// Kubeconfig text, PEM stand-ins and files for the apiserver tests. The PEM bodies are not real
// certificates: the library checks only the armour, OpenSSL judges the rest at connect time.
#pragma once

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <sstream>
#include <string>

#include "common/status.h"
#include "common/temp_dir.h"

namespace gfp::adapters::apiserver::testing {

inline const std::string kCaPem =
    "-----BEGIN CERTIFICATE-----\nQ0EgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n";
inline const std::string kClientCertPem =
    "-----BEGIN CERTIFICATE-----\nY2xpZW50IGNlcnQ=\n-----END CERTIFICATE-----\n";
inline const std::string kClientKeyPem =
    "-----BEGIN EC PRIVATE KEY-----\nY2xpZW50IGtleQ==\n-----END EC PRIVATE KEY-----\n";

// Standard base64 with padding, written independently of the decoder under test.
inline std::string Encode(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

// "key: value" lines indented under an entry's inner map.
inline std::string Indent(const std::string& lines, int spaces) {
  std::istringstream in(lines);
  std::string line, out;
  while (std::getline(in, line)) out += std::string(spaces, ' ') + line + "\n";
  return out;
}

// One cluster "c1", one context "main" (the current one) and one user "u1"; each part can be
// replaced by the test.
struct KubeconfigText {
  std::string current_context = "main";
  std::string cluster =
      "server: https://api.example:6443\ncertificate-authority-data: " + Encode(kCaPem);
  std::string context = "cluster: c1\nuser: u1";
  std::string user = "token: abc.def-ghi_123";

  std::string Render() const {
    return "apiVersion: v1\nkind: Config\ncurrent-context: " + current_context +
           "\nclusters:\n- name: c1\n  cluster:\n" + Indent(cluster, 4) +
           "contexts:\n- name: main\n  context:\n" + Indent(context, 4) +
           "users:\n- name: u1\n  user:\n" + Indent(user, 4);
  }
};

// The error message of a failed Result, or a note that it did not fail.
template <typename T>
std::string ErrorOf(const Result<T>& result) {
  return result.ok() ? std::string("<no error>") : result.status().message();
}

// Runs `load` (which reads the FIFO at `fifo`) on another thread. If it has not returned after
// 10 s it is blocked in open(): the test fails, and opening the FIFO's write end lets it go, so
// a regression turns the test red instead of hanging the suite.
template <typename Load>
std::string WithoutBlockingOn(const std::filesystem::path& fifo, Load load) {
  auto result = std::async(std::launch::async, load);
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "reading " << fifo << " blocked";
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
  }
  return result.get();
}

}  // namespace gfp::adapters::apiserver::testing
