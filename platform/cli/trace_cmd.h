// `smmu-vp trace`: working with DMA/IOMMU trace files (traces/README.md):
// `trace import` converts Linux ftrace text (iommu:* and dma:* events) into
// our format (traces/README.md); `trace stats` summarises a trace file.
#pragma once

#include <CLI/CLI.hpp>

namespace smmu_vp::cli {

// Declares the `trace` subcommand and its own subcommands on `cli`.
CLI::App* add_trace_command(CLI::App& cli);
// Runs the parsed `trace` subcommand; returns the process exit code (0 done,
// 2 bad input: the message on stderr names the file, line and field).
int run_trace_command(const CLI::App& trace_cmd);

}  // namespace smmu_vp::cli
