// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/objstore/s3_xml.h"

#include <string>

#include "flinkstate/objstore/s3_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::objstore {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

// The shapes of the S3 API reference's examples (ListObjectsV2, Error).
TEST(S3XmlTest, ParsesAListObjectsV2Page) {
  const std::string xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>ckpt</Name><Prefix>job/</Prefix><KeyCount>2</KeyCount>
  <IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents><Key>job/chk-7/_metadata</Key><Size>38112</Size><ETag>&quot;abc&quot;</ETag></Contents>
  <Contents><Key>job/chk-8/a&amp;b</Key><Size>0</Size></Contents>
  <CommonPrefixes><Prefix>job/shared/</Prefix></CommonPrefixes>
</ListBucketResult>)";
  absl::StatusOr<ListResult> r = ParseListBucketResult(xml);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_EQ(r->objects.size(), 2u);
  EXPECT_EQ(r->objects[0].key, "job/chk-7/_metadata");
  EXPECT_EQ(r->objects[0].size, 38112u);
  EXPECT_EQ(r->objects[0].etag, "\"abc\"");
  EXPECT_EQ(r->objects[1].key, "job/chk-8/a&b");
  EXPECT_THAT(r->common_prefixes, ::testing::ElementsAre("job/shared/"));
  EXPECT_TRUE(r->is_truncated);
  EXPECT_EQ(r->next_continuation_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(S3XmlTest, RefusesBadListings) {
  EXPECT_THAT(ParseListBucketResult("<Error><Code>x</Code></Error>").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "not a ListBucketResult"));
  EXPECT_THAT(ParseListBucketResult(
                  "<ListBucketResult><Contents><Size>-1</Size></Contents></ListBucketResult>")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "not a byte count"));
  EXPECT_THAT(
      ParseListBucketResult("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>")
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "without a NextContinuationToken"));
  EXPECT_THAT(ParseListBucketResult("<ListBucketResult>").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "line 1"));
}

TEST(S3XmlTest, ParsesErrorBodies) {
  absl::StatusOr<S3Error> e = ParseS3Error(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code><Message>The "
      "resource you requested does not exist</Message><Key>job/_metadata</Key>"
      "<RequestId>4442587FB7D0A2F9</RequestId></Error>");
  ASSERT_THAT(e.status(), IsOk());
  EXPECT_EQ(e->code, "NoSuchKey");
  EXPECT_EQ(e->message, "The resource you requested does not exist");
  EXPECT_EQ(e->resource, "job/_metadata");
  EXPECT_EQ(e->request_id, "4442587FB7D0A2F9");
  // STS wraps it.
  absl::StatusOr<S3Error> sts = ParseS3Error(
      "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
      "<Message>bad</Message></Error><RequestId>r1</RequestId></ErrorResponse>");
  ASSERT_THAT(sts.status(), IsOk());
  EXPECT_EQ(sts->code, "InvalidIdentityToken");
  EXPECT_EQ(sts->request_id, "r1");
  EXPECT_THAT(ParseS3Error("<html><body>502 Bad Gateway</body></html>").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "no Error element"));
  EXPECT_THAT(ParseS3Error("").status(), StatusIs(absl::StatusCode::kInvalidArgument, "xml"));
}

TEST(S3XmlTest, RefusesDoctypesAndDeepNesting) {
  EXPECT_THAT(ParseXmlElements("<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "DOCTYPE"));
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "<a>";
  EXPECT_THAT(ParseXmlElements(deep).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "nested deeper"));
}

TEST(S3XmlTest, ParsesWebIdentityCredentials) {
  absl::StatusOr<StsCredentials> c = ParseAssumeRoleWithWebIdentityResponse(
      "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
      "<SessionToken>tok</SessionToken><SecretAccessKey>sec</SecretAccessKey>"
      "<Expiration>2026-12-01T15:00:00Z</Expiration><AccessKeyId>ASIA1</AccessKeyId>"
      "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>");
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_EQ(c->access_key_id, "ASIA1");
  EXPECT_EQ(c->secret_access_key, "sec");
  EXPECT_EQ(c->session_token, "tok");
  EXPECT_THAT(ParseAssumeRoleWithWebIdentityResponse("<X/>").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "without Credentials"));
}

TEST(ObjectUrlTest, ParsesFlinkSchemes) {
  absl::StatusOr<ObjectUrl> u = ParseObjectUrl("s3a://bucket/job/chk-7/_metadata");
  ASSERT_THAT(u.status(), IsOk());
  EXPECT_EQ(u->scheme, "s3a");
  EXPECT_EQ(u->bucket, "bucket");
  EXPECT_EQ(u->key, "job/chk-7/_metadata");
  EXPECT_EQ(u->ToString(), "s3a://bucket/job/chk-7/_metadata");
  EXPECT_TRUE(ParseObjectUrl("s3p://b").ok());
  EXPECT_THAT(ParseObjectUrl("s3:///k").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "no bucket"));
  EXPECT_THAT(ParseObjectUrl("gs://b/k").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "not an s3://"));
}

// UploadPartCopy's answer (S3 API reference, UploadPartCopy).
TEST(S3XmlTest, FindsTheETagOfACopiedPart) {
  absl::StatusOr<std::string> etag = XmlText(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CopyPartResult><LastModified>"
      "2011-04-11T20:34:56.000Z</LastModified><ETag>&quot;9b2cf535f27731c974343645a3985328&quot;"
      "</ETag></CopyPartResult>",
      "CopyPartResult/ETag");
  ASSERT_THAT(etag.status(), IsOk());
  EXPECT_EQ(*etag, "\"9b2cf535f27731c974343645a3985328\"");
}

}  // namespace
}  // namespace flinkstate::objstore
