// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * RDMA device name -> ib_device index, from the kernel's RDMA netlink
 * (NLDEV_CMD_GET dump, what `rdma dev` reads; no privilege needed).
 * sysfs names a device but has no index, and the module and BPF record
 * the index: this is what lets a port counter join the device's other
 * events.  No netlink (an old kernel, a sandbox): no indexes, not an error.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "internal.h"

/* One device's attributes; returns whether it named both. */
static bool parse_dev(const struct nlmsghdr *h, struct rdt_devindex *out)
{
	const char *p = (const char *)NLMSG_DATA(h);
	size_t left = h->nlmsg_len - NLMSG_HDRLEN;
	bool have_idx = false, have_name = false;

	while (left >= sizeof(struct nlattr)) {
		const struct nlattr *a = (const struct nlattr *)p;
		size_t len = a->nla_len, step = NLA_ALIGN(len);
		const char *v = p + NLA_HDRLEN;

		if (len < NLA_HDRLEN || len > left)
			break;
		switch (a->nla_type & NLA_TYPE_MASK) {
		case RDMA_NLDEV_ATTR_DEV_INDEX:
			if (len >= NLA_HDRLEN + sizeof(uint32_t)) {
				memcpy(&out->index, v, sizeof(uint32_t));
				have_idx = true;
			}
			break;
		case RDMA_NLDEV_ATTR_DEV_NAME: {
			size_t n = strnlen(v, len - NLA_HDRLEN);

			if (n >= sizeof(out->name))
				n = sizeof(out->name) - 1;
			memcpy(out->name, v, n);
			out->name[n] = 0;
			have_name = n > 0;
			break;
		}
		}
		if (step >= left)
			break;
		p += step;
		left -= step;
	}
	return have_idx && have_name;
}

int rdt_devindex_read(struct rdt_devindex **out, size_t *n)
{
	struct nlmsghdr req = {
		.nlmsg_len = NLMSG_LENGTH(0),
		.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET),
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.nlmsg_seq = 1,
	};
	static char buf[32768] __attribute__((aligned(8)));
	struct rdt_devindex *v = NULL;
	size_t nv = 0;
	int fd, ret = 0;
	bool done = false;

	*out = NULL;
	*n = 0;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0)
		return -errno;
	/* The reader's loop waits on this: never for long. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO,
		   &(struct timeval){ .tv_sec = 1 }, sizeof(struct timeval));
	if (send(fd, &req, req.nlmsg_len, 0) < 0) {
		ret = -errno;
		goto out;
	}
	while (!done) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (len < 0) {
			ret = -errno;
			break;
		}
		if (len == 0)
			break;
		for (; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			struct rdt_devindex d, *nvp;

			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				ret = -EIO;
				done = true;
				break;
			}
			memset(&d, 0, sizeof(d));
			if (!parse_dev(h, &d))
				continue;
			nvp = realloc(v, (nv + 1) * sizeof(*v));
			if (!nvp) {
				ret = -ENOMEM;
				done = true;
				break;
			}
			v = nvp;
			v[nv++] = d;
		}
	}
out:
	close(fd);
	if (ret < 0) {
		free(v);
		return ret;
	}
	*out = v;
	*n = nv;
	return 0;
}
