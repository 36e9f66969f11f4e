// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stand-in for a libcrf of a newer ABI minor than this tree's: one function
 * in a version node (CRF_1.99, newer-libcrf.sym) that the real libcrf lacks.
 * It is only linked against, never loaded: its soname is libcrf.so.1, so a
 * plugin linked with it asks, at load time, the real libcrf crf has loaded
 * for CRF_1.99, as a plugin built against a newer crf would.
 */
int crf_newer_service(void);

int crf_newer_service(void)
{
	return 0;
}
