// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lines of /proc/PID/net/{raw,raw6,icmp,icmp6} (inet-proc.h).  Each is
 *
 *    sl: LOCAL:PORT REMOTE:PORT ST TX:RX TR:WHEN RETR UID TIMEOUT INODE ...
 *
 * with each address as 8 (IPv4) or 32 (IPv6) hex digits: each 32-bit word
 * of the address in network order printed as a number of this host's byte
 * order, so that the word's bytes in memory are the address's again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inet-proc.h"

/* @hex (8 or 32 digits) into @out; its length in bytes, or 0. */
static unsigned parse_addr(const char *hex, uint8_t *out)
{
	size_t n = strlen(hex);

	if (n != 8 && n != 32)
		return 0;
	for (size_t w = 0; w < n / 8; w++) {
		char word[9];
		uint32_t v;

		memcpy(word, hex + w * 8, 8);
		word[8] = '\0';
		v = (uint32_t)strtoul(word, NULL, 16);
		memcpy(out + w * 4, &v, 4);
	}
	return (unsigned)(n / 2);
}

int inet_proc_find(const char *text, unsigned long ino, struct inet_proc_sk *out)
{
	const char *line = strchr(text, '\n'); /* past the header */

	while (line && *++line) {
		char local[33], peer[33];
		struct inet_proc_sk s = {0};
		unsigned long i;
		unsigned la, pa;

		if (sscanf(line,
			   " %*u: %32[0-9A-Fa-f]:%x %32[0-9A-Fa-f]:%x %x %*x:%x %*x:%*x %*x %*u "
			   "%*d %lu",
			   local, &s.local_port, peer, &s.peer_port, &s.state, &s.rx_queue,
			   &i) != 7)
			return -EBADMSG;
		la = parse_addr(local, s.local);
		pa = parse_addr(peer, s.peer);
		if (!la || la != pa || s.local_port > 0xffff || s.peer_port > 0xffff)
			return -EBADMSG;
		s.addr_len = la;
		if (i == ino) {
			*out = s;
			return 1;
		}
		line = strchr(line, '\n');
	}
	return 0;
}
