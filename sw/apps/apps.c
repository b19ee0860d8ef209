#include "apps/apps.h"

extern const struct hal_app app_cacheline_pingpong;
extern const struct hal_app app_camera;
extern const struct hal_app app_cmd_sync_latency;
extern const struct hal_app app_dma_copy;
extern const struct hal_app app_dma_map_bench;
extern const struct hal_app app_iopf_bench;
extern const struct hal_app app_fio;
extern const struct hal_app app_iova_bench;
extern const struct hal_app app_lock_contend;
extern const struct hal_app app_map_bench;
extern const struct hal_app app_net_rx;
extern const struct hal_app app_net_tx;
extern const struct hal_app app_rbtree_walk;
extern const struct hal_app app_smmu_stress;
extern const struct hal_app app_swiotlb_bench;
extern const struct hal_app app_trace_replay;

const struct hal_app *const sw_apps[] = {
    &app_cacheline_pingpong,
    &app_camera,
    &app_cmd_sync_latency,
    &app_dma_copy,
    &app_dma_map_bench,
    &app_iopf_bench,
    &app_fio,
    &app_iova_bench,
    &app_lock_contend,
    &app_map_bench,
    &app_net_rx,
    &app_net_tx,
    &app_rbtree_walk,
    &app_smmu_stress,
    &app_swiotlb_bench,
    &app_trace_replay,
};

const unsigned sw_app_count = sizeof sw_apps / sizeof sw_apps[0];
