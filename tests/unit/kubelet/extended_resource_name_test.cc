#include "sim/kubelet/extended_resource_name.h"

#include <gtest/gtest.h>

#include <string>

namespace gfp::kubelet {
namespace {

TEST(KubeletResourceName, AcceptsDomainQualifiedNames) {
  for (const std::string name :
       {"nvidia.com/GH100_H100_SXM5_80GB", "nvidia.com/2330", "example.com/a.b-c_d", "a.b.c/x"}) {
    EXPECT_TRUE(IsExtendedResourceName(name)) << name;
  }
}

TEST(KubeletResourceName, RefusesWhatTheKubeletRefuses) {
  for (const std::string name : {"gpu",                      // no domain: a native resource
                                 "kubernetes.io/gpu",        // reserved domain
                                 "foo.kubernetes.io/gpu",    // reserved domain
                                 "requests.nvidia.com/gpu",  // quota prefix
                                 "nvidia.com/",              // empty name
                                 "/gpu",                     // empty domain
                                 "Nvidia.com/gpu",           // domain must be lower case
                                 "nvidia_com/gpu",           // not a DNS subdomain
                                 "nvidia.com/a/b",           // two slashes
                                 "nvidia.com/-gpu",          // name must start alphanumeric
                                 "nvidia.com/gpu-",          // and end alphanumeric
                                 "nvidia.com/g pu", ""}) {
    EXPECT_FALSE(IsExtendedResourceName(name)) << name;
  }
  EXPECT_FALSE(IsExtendedResourceName("nvidia.com/" + std::string(64, 'a')));
  EXPECT_TRUE(IsExtendedResourceName("nvidia.com/" + std::string(63, 'a')));
}

}  // namespace
}  // namespace gfp::kubelet
