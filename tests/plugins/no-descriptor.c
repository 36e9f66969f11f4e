// SPDX-License-Identifier: GPL-2.0-only
/* A shared object that is not a crf plugin (no descriptor). */
int not_a_plugin(void);
int not_a_plugin(void)
{
	return 42;
}
