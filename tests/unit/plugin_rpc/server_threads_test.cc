// UnixSocketServer serves overlapping calls (kubelet's do: a ListAndWatch stream holds a thread
// for its life while Allocate and GetPreferredAllocation meet) with the same few threads. gRPC's
// sync server, left at its default, made a thread and ended one for almost every overlap, and
// each thread's end is a TLB shoot-down that interrupts every other thread of the process.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/temp_dir.h"
#include "plugin/rpc/unix_socket_server.h"
#include "pluginregistration/v1/api.grpc.pb.h"

namespace gfp::plugin::rpc {
namespace {

// Answers GetInfo and notes which thread served it.
class ThreadNotingRegistration final : public pluginregistration::Registration::Service {
 public:
  grpc::Status GetInfo(grpc::ServerContext*, const pluginregistration::InfoRequest*,
                       pluginregistration::PluginInfo* info) override {
    info->set_name("threads");
    std::lock_guard lock(mu_);
    threads_.insert(::gettid());
    return grpc::Status::OK;
  }
  std::size_t Threads() const {
    std::lock_guard lock(mu_);
    return threads_.size();
  }

 private:
  mutable std::mutex mu_;
  std::set<pid_t> threads_;
};

TEST(UnixSocketServerThreads, OverlappingCallsAreServedByTheSameFewThreads) {
  gfp::testing::TempDir dir;
  ThreadNotingRegistration service;
  UnixSocketServer server("thread test", dir.path() / "threads.sock");
  const Status served = server.Serve({&service});
  ASSERT_TRUE(served.ok()) << served.message();

  constexpr int kCallers = 3;
  constexpr int kCallsEach = 300;
  std::vector<std::thread> callers;
  std::vector<int> failures(kCallers, 0);
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      auto channel = grpc::CreateChannel("unix:" + (dir.path() / "threads.sock").string(),
                                         grpc::InsecureChannelCredentials());
      auto stub = pluginregistration::Registration::NewStub(channel);
      for (int i = 0; i < kCallsEach; ++i) {
        grpc::ClientContext context;
        pluginregistration::PluginInfo info;
        if (!stub->GetInfo(&context, pluginregistration::InfoRequest(), &info).ok()) {
          ++failures[static_cast<std::size_t>(c)];
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(failures[static_cast<std::size_t>(c)], 0);
  // Three callers need at most three threads at once, and a spare to poll while they work.
  EXPECT_LE(service.Threads(), 6u) << "threads were made and ended for overlapping calls";
}

}  // namespace
}  // namespace gfp::plugin::rpc
