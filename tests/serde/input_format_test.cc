// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/input_format.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/gzip.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate::serde {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

// A stream written by JDK 17 (ObjectOutputStream), from the shared samples.
std::string JdkStream() {
  std::ifstream f(std::string(FLINKSTATE_SHARED_DIR) + "/spec/samples/jdk/hashmap.bin",
                  std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

using ::flinkstate::testing::Gzip;

// `xxd -p`: 30 bytes (60 hex digits) per line.
std::string XxdPlain(const std::string& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    absl::StrAppendFormat(&out, "%02x", static_cast<uint8_t>(in[i]));
    if (i % 30 == 29) out += "\n";
  }
  return out + "\n";
}

// `base64` (coreutils): wrapped at 76 columns.
std::string Base64Wrapped(const std::string& in) {
  std::string b = absl::Base64Escape(in), out;
  for (size_t i = 0; i < b.size(); i += 76) absl::StrAppend(&out, b.substr(i, 76), "\n");
  return out;
}

void ExpectDecodes(const std::string& text, const std::string& raw, const std::string& layers) {
  absl::StatusOr<DecodedInput> d = DecodeInputFormat(AsBytes(text));
  ASSERT_THAT(d.status(), IsOk()) << layers;
  EXPECT_EQ(d->Description(), layers);
  EXPECT_EQ(std::string(AsStringView(d->bytes(AsBytes(text)))), raw) << layers;
}

TEST(InputFormatTest, RawIsNotCopied) {
  const std::string raw = JdkStream();
  ASSERT_GT(raw.size(), 4u);
  absl::StatusOr<DecodedInput> d = DecodeInputFormat(AsBytes(raw));
  ASSERT_THAT(d.status(), IsOk());
  EXPECT_TRUE(d->layers.empty());
  EXPECT_EQ(d->bytes(AsBytes(raw)).data(), AsBytes(raw).data());
}

TEST(InputFormatTest, EveryFormAPersonPastes) {
  const std::string raw = JdkStream();
  ExpectDecodes(Gzip(raw), raw, "gzip");
  ExpectDecodes(XxdPlain(raw), raw, "hex");
  std::string hex_no_space = XxdPlain(raw);
  hex_no_space.erase(std::remove(hex_no_space.begin(), hex_no_space.end(), '\n'),
                     hex_no_space.end());
  ExpectDecodes(hex_no_space, raw, "hex");
  ExpectDecodes(Base64Wrapped(raw), raw, "base64");
  ExpectDecodes("\xEF\xBB\xBF" + absl::Base64Escape(raw) + "\n", raw, "base64");
  ExpectDecodes(Base64Wrapped(Gzip(raw)), raw, "base64 > gzip");
  ExpectDecodes(Gzip(XxdPlain(raw)), raw, "gzip > hex");
  // `kubectl get configmap -o json` / `-o yaml` holding Flink's value.
  const std::string b64 = absl::Base64Escape(raw);
  ExpectDecodes(absl::StrCat("{\n    \"apiVersion\": \"v1\",\n    \"data\": {\n        \"address\": \"",
                             b64, "\"\n    },\n    \"kind\": \"ConfigMap\"\n}\n"),
                raw, "configmap");
  ExpectDecodes(absl::StrCat("apiVersion: v1\ndata:\n  counter: \"7\"\n  checkpointID-0000000000000000042: ",
                             b64, "\nkind: ConfigMap\n"),
                raw, "configmap");
}

TEST(InputFormatTest, ErrorsNameTheFormat) {
  EXPECT_THAT(DecodeInputFormat(AsBytes(std::string())).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "empty file"));
  EXPECT_THAT(DecodeInputFormat(AsBytes(std::string(" \n"))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "empty file"));
  std::string gz = Gzip(JdkStream());
  EXPECT_THAT(DecodeInputFormat(AsBytes(gz.substr(0, gz.size() / 2))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "gzip: gzip-compressed data ends early"));
  gz[gz.size() / 2] ^= 0x55;
  gz[gz.size() / 2 + 1] ^= 0x55;
  EXPECT_FALSE(DecodeInputFormat(AsBytes(gz)).ok());
  EXPECT_THAT(DecodeInputFormat(AsBytes(std::string("aced0005zz")), InputFormat::kHex).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "hex: invalid character 0x7A at byte 8"));
  EXPECT_THAT(DecodeInputFormat(AsBytes(std::string("rO0A$XNy")), InputFormat::kBase64).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "base64: invalid character 0x24 at byte 4"));
  EXPECT_THAT(DecodeInputFormat(AsBytes(std::string("not gzip")), InputFormat::kGzip).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "gzip:"));
  EXPECT_THAT(ParseInputFormat("zip").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "auto, raw, base64, hex or gzip"));
}

TEST(InputFormatTest, GzipBombIsBounded) {
  const std::string zeros(8 << 20, '\0');
  InputFormatLimits limits;
  limits.max_decoded_bytes = 1 << 20;
  EXPECT_THAT(DecodeInputFormat(AsBytes(Gzip(zeros)), InputFormat::kAuto, limits).status(),
              StatusIs(absl::StatusCode::kResourceExhausted, "more than 1048576 bytes"));
}

// The default bound follows the input: 64x its size plus 64 MiB (attack run
// 6, item 8: a 16 MiB gzip bomb inflated to 16 GiB before it stopped).
TEST(InputFormatTest, GzipBombIsBoundedByAMultipleOfTheInputByDefault) {
  const std::string bomb = Gzip(std::string(size_t{96} << 20, '\0'));
  const uint64_t bound = InputFormatLimits{}.MaxDecodedBytes(bomb.size());
  EXPECT_EQ(bound, 64 * bomb.size() + (uint64_t{64} << 20));
  ASSERT_LT(bound, uint64_t{96} << 20);
  EXPECT_THAT(DecodeInputFormat(AsBytes(bomb)).status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       absl::StrCat("gzip: the data inflates to more than ", bound,
                                    " bytes, the bound for an input of ", bomb.size(),
                                    " bytes; decompress it first (gunzip -k)")));
  // ... also beneath a Base64 layer: the bound and the size named are the
  // outer input's (attack run 7: the message named the gzip layer's size).
  const std::string b64 = absl::Base64Escape(bomb);
  EXPECT_THAT(DecodeInputFormat(AsBytes(b64)).status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       absl::StrCat("more than ", InputFormatLimits{}.MaxDecodedBytes(b64.size()),
                                    " bytes, the bound for an input of ", b64.size(), " bytes")));
  // A file that compresses well but within the bound decodes whole.
  const std::string zeros(size_t{8} << 20, '\0');
  absl::StatusOr<DecodedInput> d = DecodeInputFormat(AsBytes(Gzip(zeros)));
  ASSERT_THAT(d.status(), IsOk());
  EXPECT_EQ(d->decoded, zeros);
  // The bound saturates instead of wrapping.
  EXPECT_EQ(InputFormatLimits{}.MaxDecodedBytes(std::numeric_limits<uint64_t>::max() / 2),
            std::numeric_limits<uint64_t>::max());
}

// RFC 1952 2.2: members one after the other inflate to their concatenation
// (as gunzip writes it); other bytes after the data are an error, not
// silently ignored (attack run 7: `cat a.gz a.gz` and `a.gz` + "JUNK"
// verified as the first member alone).
TEST(InputFormatTest, GzipMembersConcatenateAndTrailingBytesAreAnError) {
  const std::string raw("\xAC\xED\x00\x05" "t\x00\x03" "abc", 10);
  const std::string gz = Gzip(raw);
  absl::StatusOr<DecodedInput> d = DecodeInputFormat(AsBytes(gz + gz), InputFormat::kGzip);
  ASSERT_THAT(d.status(), IsOk());
  EXPECT_EQ(d->decoded, raw + raw);
  EXPECT_THAT(DecodeInputFormat(AsBytes(gz + "JUNK")).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       absl::StrCat("gzip: 4 bytes after the gzip data at byte ", gz.size(),
                                    " start no other gzip member")));
  EXPECT_THAT(DecodeInputFormat(AsBytes(gz + gz.substr(0, gz.size() - 3))).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "ends early (truncated)"));
}

TEST(InputFormatTest, BinaryOtherThanGzipIsRaw) {
  const std::string b("\x49\x60\x67\x2D\x00\x00\x00\x03", 8);  // _metadata magic
  absl::StatusOr<DecodedInput> d = DecodeInputFormat(AsBytes(b));
  ASSERT_THAT(d.status(), IsOk());
  EXPECT_TRUE(d->layers.empty());
}

}  // namespace
}  // namespace flinkstate::serde
