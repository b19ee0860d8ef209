#!/bin/sh
# /init of the capture initramfs (scripts/capture-kernel-traces.sh): runs in
# the arm64 guest under busybox. Loads the drivers, runs a DMA-heavy workload
# on the NVMe drive, the virtio-blk disk and the virtio-net NIC, each phase
# opened by a trace_marker line, then prints the trace buffer to the console
# between two marker lines the host cuts on, and powers off.
# The iommu: and dma: events were enabled on the kernel command line
# (trace_event=), so the devices' probes and domain attaches are in the trace.
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tracefs tracefs /sys/kernel/tracing
T=/sys/kernel/tracing

# The module order was resolved on the host from each module's depends=.
while read -r m; do
  insmod "/lib/modules/$m" || echo "capture: insmod $m failed"
done < /modules.order

# Wait for the three block and network devices to be probed.
n=0
while [ $n -lt 100 ] && ! { [ -b /dev/nvme0n1 ] && [ -b /dev/vda ] && [ -e /sys/class/net/eth0 ]; }; do
  sleep 0.1
  n=$((n + 1))
done
ls /dev/nvme0n1 /dev/vda /sys/class/net/eth0 >/dev/null || echo "capture: a device is missing"

phase() { echo "phase $1" > $T/trace_marker; }

ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0

# Direct I/O so that every read and write is a DMA of its own, not a page
# cache hit.
phase nvme-read-4k
dd if=/dev/nvme0n1 of=/dev/null bs=4k count=512 iflag=direct 2>/dev/null
phase nvme-read-128k
dd if=/dev/nvme0n1 of=/dev/null bs=128k count=64 iflag=direct 2>/dev/null
phase blk-write-64k
dd if=/dev/zero of=/dev/vda bs=64k count=64 oflag=direct 2>/dev/null
phase blk-read-4k
dd if=/dev/vda of=/dev/null bs=4k count=256 iflag=direct 2>/dev/null
phase net-ping
ping -c 32 -s 1400 -i 0.02 -q 10.0.2.2 >/dev/null 2>&1
phase end

echo 0 > $T/tracing_on
echo "@@smmu-vp-trace-begin@@"
cat $T/trace
echo "@@smmu-vp-trace-end@@"
poweroff -f
