// Register map of the generic DMA engine (docs/devices.md#dma). Declared once;
// used by the model, the HAL-side driver in sw/drivers and the tests.
// All registers are 32 bits; a 64-bit access to a _LO register covers _HI too.
#pragma once

#ifdef __cplusplus
#include <cstdint>
#else
#include <stdint.h>
#endif

#define DMA_REG_ID 0x000u        /* RO: DMA_ID_VALUE */
#define DMA_REG_CHANNELS 0x004u  /* RO: number of channels */
#define DMA_REG_BURST 0x008u     /* RO: burst size in bytes */
#define DMA_ID_VALUE 0x444D4131u /* "DMA1" */

#define DMA_CH_BASE 0x100u
#define DMA_CH_STRIDE 0x40u
#define DMA_CH_REG(ch, reg) (DMA_CH_BASE + (ch) * DMA_CH_STRIDE + (reg))

#define DMA_CH_SRC_LO 0x00u
#define DMA_CH_SRC_HI 0x04u
#define DMA_CH_DST_LO 0x08u
#define DMA_CH_DST_HI 0x0Cu
#define DMA_CH_LEN 0x10u        /* bytes, 1..2^32-1 */
#define DMA_CH_SID 0x14u        /* StreamID of the transfer; resets to the configured one */
#define DMA_CH_SSID 0x18u       /* [19:0] SubstreamID, bit 31 SSV */
#define DMA_CH_CTRL 0x1Cu
#define DMA_CH_STATUS 0x20u
#define DMA_CH_MSI_DATA 0x24u
#define DMA_CH_MSI_ADDR_LO 0x28u
#define DMA_CH_MSI_ADDR_HI 0x2Cu
#define DMA_CH_BYTES_DONE 0x30u /* RO: bytes written by the last transfer */

#define DMA_SSID_SSV (1u << 31)
#define DMA_SSID_MASK 0xFFFFFu

#define DMA_CTRL_GO (1u << 0)     /* write 1: start; ignored while busy */
#define DMA_CTRL_IRQ_EN (1u << 1) /* wired interrupt (irq + channel) at completion */
#define DMA_CTRL_MSI_EN (1u << 2) /* 32-bit write of MSI_DATA to MSI_ADDR at completion */

#define DMA_STATUS_BUSY (1u << 0)  /* RO */
#define DMA_STATUS_DONE (1u << 1)  /* W1C */
#define DMA_STATUS_ERROR (1u << 2) /* W1C, clears ERR_CODE too */
#define DMA_STATUS_ERR_SHIFT 8u
#define DMA_STATUS_ERR_MASK (0xFFu << DMA_STATUS_ERR_SHIFT)

#define DMA_ERR_NONE 0u
#define DMA_ERR_READ 1u  /* a read burst got an error response */
#define DMA_ERR_WRITE 2u /* a write burst got an error response */
#define DMA_ERR_LEN 3u   /* LEN was 0 */
