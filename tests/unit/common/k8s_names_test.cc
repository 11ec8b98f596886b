// Kubernetes names as the API server validates them (RFC 1123 labels and subdomains, UIDs):
// cases written from the Kubernetes documentation, not from the implementation.
#include "common/k8s_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gfp {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(K8sNames, LabelsAcceptWhatTheApiServerAccepts) {
  for (const char* ok : {"a", "vms", "gpu0", "kube-system", "0abc", "a-b-c-9"}) {
    EXPECT_THAT(DnsLabelProblem(ok), IsEmpty()) << ok;
  }
  EXPECT_THAT(DnsLabelProblem(std::string(63, 'a')), IsEmpty());
}

TEST(K8sNames, LabelsRefuseWithAReason) {
  EXPECT_THAT(DnsLabelProblem(""), HasSubstr("is empty"));
  EXPECT_THAT(DnsLabelProblem(std::string(64, 'a')), HasSubstr("longer than 63"));
  EXPECT_THAT(DnsLabelProblem("Vms"), HasSubstr("other than a-z"));
  EXPECT_THAT(DnsLabelProblem("a.b"), HasSubstr("other than a-z"));
  EXPECT_THAT(DnsLabelProblem("a_b"), HasSubstr("other than a-z"));
  EXPECT_THAT(DnsLabelProblem("-a"), HasSubstr("start and end"));
  EXPECT_THAT(DnsLabelProblem("a-"), HasSubstr("start and end"));
  EXPECT_THAT(DnsLabelProblem(std::string("a\0b", 3)), HasSubstr("other than a-z"));
}

TEST(K8sNames, SubdomainsAreDotSeparatedLabels) {
  for (const char* ok : {"gpu-fabric-plugin.io", "a", "vm-a-gpus-x7k2p", "a.b.c", "1.2.3"}) {
    EXPECT_THAT(DnsSubdomainProblem(ok), IsEmpty()) << ok;
  }
  EXPECT_THAT(DnsSubdomainProblem(std::string(253, 'a')), HasSubstr("label longer than 63"));
  std::string long_ok;
  for (int i = 0; i < 31; ++i) long_ok += "abcdefg.";  // 248 characters
  long_ok += "abcde";
  ASSERT_EQ(long_ok.size(), 253u);
  EXPECT_THAT(DnsSubdomainProblem(long_ok), IsEmpty()) << long_ok;
  EXPECT_THAT(DnsSubdomainProblem(long_ok + "a"), HasSubstr("longer than 253"));
  EXPECT_THAT(DnsSubdomainProblem("a..b"), HasSubstr("empty label"));
  EXPECT_THAT(DnsSubdomainProblem(".a"), HasSubstr("empty label"));
  EXPECT_THAT(DnsSubdomainProblem("a."), HasSubstr("empty label"));
  EXPECT_THAT(DnsSubdomainProblem("a.-b"), HasSubstr("start and end"));
  EXPECT_THAT(DnsSubdomainProblem("A.b"), HasSubstr("other than a-z"));
  EXPECT_THAT(DnsSubdomainProblem("a/b"), HasSubstr("other than a-z"));
}

TEST(K8sNames, ADriverNameIsASubdomainOfAtMost63) {
  EXPECT_THAT(DnsSubdomainProblem("gpu-fabric-plugin.io", 63), IsEmpty());
  EXPECT_THAT(DnsSubdomainProblem(std::string(30, 'a') + "." + std::string(33, 'b'), 63),
              HasSubstr("longer than 63"));
}

TEST(K8sNames, UidsAreFitForFileNames) {
  EXPECT_THAT(UidProblem("0b9a4d3e-5c1f-4e2a-9d8b-7f6e5d4c3b2a"), IsEmpty());
  EXPECT_THAT(UidProblem("UID-1"), IsEmpty());
  EXPECT_THAT(UidProblem(""), HasSubstr("is empty"));
  EXPECT_THAT(UidProblem(std::string(65, 'a')), HasSubstr("longer than 64"));
  for (const char* bad : {"../x", "a/b", "a.b", "a b", "a_b", "a\n"}) {
    EXPECT_THAT(UidProblem(bad), HasSubstr("other than")) << bad;
  }
}

}  // namespace
}  // namespace gfp
