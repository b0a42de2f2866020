// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The examples (extract_examples.py) are compiled and linked, not run: most
// need a checkpoint file. This is the executable's entry point.

int main() { return 0; }
