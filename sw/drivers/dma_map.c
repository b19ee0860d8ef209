#include "drivers/dma_map.h"

bool drv_dma_time_unmaps;
