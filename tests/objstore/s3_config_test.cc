// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

#include "flinkstate/objstore/s3_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::objstore {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

// Each test starts from an environment without AWS variables, with HOME
// pointing at a scratch directory (the AWS CLI's sources, s3_client.h).
class S3ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v :
         {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
          "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
          "AWS_ENDPOINT_URL_STS", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
          "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_MAX_ATTEMPTS"}) {
      ::unsetenv(v);
    }
    home_ = ::testing::TempDir() + "/s3home" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::system(("mkdir -p " + home_ + "/.aws").c_str());
    ::setenv("HOME", home_.c_str(), 1);
  }
  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(home_ + "/" + rel) << text;
  }
  std::string home_;
};

TEST_F(S3ConfigTest, EnvironmentCredentialsAndRegion) {
  ::setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
  ::setenv("AWS_SESSION_TOKEN", "tok", 1);
  ::setenv("AWS_DEFAULT_REGION", "eu-west-1", 1);
  absl::StatusOr<S3Config> c = S3Config::FromEnvironment();
  ASSERT_THAT(c.status(), IsOk());
  ASSERT_TRUE(c->credentials.has_value());
  EXPECT_EQ(c->credentials->access_key_id, "AKIDENV");
  EXPECT_EQ(c->credentials->session_token, "tok");
  EXPECT_EQ(c->region, "eu-west-1");
  EXPECT_EQ(c->endpoint, "");
  ::setenv("AWS_REGION", "us-west-2", 1);  // AWS_REGION wins
  EXPECT_EQ(S3Config::FromEnvironment()->region, "us-west-2");
}

TEST_F(S3ConfigTest, PartCopiesAreOnUnlessTurnedOff) {
  ::unsetenv("FLINKSTATE_S3_PART_COPY");
  ASSERT_THAT(S3Config::FromEnvironment().status(), IsOk());
  EXPECT_TRUE(S3Config::FromEnvironment()->part_copy);
  EXPECT_TRUE(S3Client(*S3Config::FromEnvironment()).part_copy().has_value());
  ::setenv("FLINKSTATE_S3_PART_COPY", "0", 1);
  EXPECT_FALSE(S3Config::FromEnvironment()->part_copy);
  EXPECT_FALSE(S3Client(*S3Config::FromEnvironment()).part_copy().has_value());
  ::setenv("FLINKSTATE_S3_PART_COPY", "maybe", 1);
  EXPECT_THAT(S3Config::FromEnvironment().status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "FLINKSTATE_S3_PART_COPY"));
  ::unsetenv("FLINKSTATE_S3_PART_COPY");
}

TEST_F(S3ConfigTest, ProfilesFromTheSharedFiles) {
  Write(".aws/credentials",
        "[default]\naws_access_key_id = AKIDDEF\naws_secret_access_key = s1\n\n"
        "[prod]\naws_access_key_id=AKIDPROD\naws_secret_access_key=s2\n");
  Write(".aws/config",
        "[default]\nregion = us-east-2\n[profile prod]\nregion = ap-south-1\n"
        "endpoint_url = http://127.0.0.1:9/\ns3 =\n  addressing_style = virtual\n");
  absl::StatusOr<S3Config> d = S3Config::FromEnvironment();
  ASSERT_THAT(d.status(), IsOk());
  EXPECT_EQ(d->credentials->access_key_id, "AKIDDEF");
  EXPECT_EQ(d->region, "us-east-2");
  ::setenv("AWS_PROFILE", "prod", 1);
  absl::StatusOr<S3Config> p = S3Config::FromEnvironment();
  ASSERT_THAT(p.status(), IsOk());
  EXPECT_EQ(p->credentials->access_key_id, "AKIDPROD");
  EXPECT_EQ(p->region, "ap-south-1");
  EXPECT_EQ(p->endpoint, "http://127.0.0.1:9");
  EXPECT_EQ(p->addressing, S3Config::Addressing::kVirtual);
  // The flag wins over the profile.
  EXPECT_EQ(S3Config::FromEnvironment("http://localhost:1")->endpoint, "http://localhost:1");
}

TEST_F(S3ConfigTest, WebIdentityIsPreferredOverFiles) {
  Write(".aws/credentials", "[default]\naws_access_key_id=AKIDDEF\naws_secret_access_key=s\n");
  ::setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/secrets/token", 1);
  ::setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/flink", 1);
  ::setenv("AWS_REGION", "eu-central-1", 1);
  absl::StatusOr<S3Config> c = S3Config::FromEnvironment();
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_FALSE(c->credentials.has_value());
  EXPECT_EQ(c->role_arn, "arn:aws:iam::123456789012:role/flink");
  EXPECT_EQ(c->sts_endpoint, "https://sts.eu-central-1.amazonaws.com");
}

TEST_F(S3ConfigTest, BadSettingsAreRefused) {
  ::setenv("AWS_MAX_ATTEMPTS", "lots", 1);
  EXPECT_THAT(S3Config::FromEnvironment().status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "AWS_MAX_ATTEMPTS"));
  ::unsetenv("AWS_MAX_ATTEMPTS");
  EXPECT_THAT(S3Config::FromEnvironment("127.0.0.1:9000").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "not an http"));
}

TEST_F(S3ConfigTest, NoCredentialsSaysWhereItLooked) {
  absl::StatusOr<S3Config> c = S3Config::FromEnvironment();
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_FALSE(c->credentials.has_value());
  EXPECT_THAT(c->credential_search, ::testing::HasSubstr(".aws/credentials [default]"));
}

}  // namespace
}  // namespace flinkstate::objstore
