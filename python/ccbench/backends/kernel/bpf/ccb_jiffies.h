/* SPDX-License-Identifier: GPL-2.0 */
/* Time in jiffies, for the ports of modules that count it so (BIC, Westwood+, H-TCP): the
 * kernel's tick counter through bpf_jiffies64() and the running kernel's HZ as CONFIG_HZ, which
 * libbpf fills in from the kernel configuration (/proc/config.gz or /boot/config-<release>) when
 * the port is loaded. The conversions restate include/linux/jiffies.h. */
#ifndef CCB_JIFFIES_H
#define CCB_JIFFIES_H

#include "ccb_tcp.h"

extern const unsigned int CONFIG_HZ __kconfig;

/* tcp_jiffies32 / (u32)jiffies */
static __always_inline __u32 ccb_jiffies32(void)
{
	return (__u32)bpf_jiffies64();
}

/* usecs_to_jiffies(): rounded up to the next tick */
static __always_inline __u32 ccb_usecs_to_jiffies(__u32 usecs)
{
	return ((__u64)usecs * CONFIG_HZ + 999999) / 1000000;
}

/* msecs_to_jiffies(): rounded up to the next tick */
static __always_inline __u32 ccb_msecs_to_jiffies(__u32 msecs)
{
	return ((__u64)msecs * CONFIG_HZ + 999) / 1000;
}

#endif
