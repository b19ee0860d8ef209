// `smmu-vp trace`: working with DMA/IOMMU trace files (traces/README.md):
// `trace import` converts Linux ftrace text (iommu:* and dma:* events) into
// our format (traces/README.md); `trace stats` summarises a trace file.
#pragma once

#include "cli/subcommand.h"

namespace smmu_vp::cli {

// `trace` with its own subcommands, `import` and `stats`. Exit code: 0 done,
// 2 bad input (the message on stderr names the file, line and field).
Subcommand add_trace_command(CLI::App& cli);

}  // namespace smmu_vp::cli
