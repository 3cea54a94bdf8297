// SPDX-License-Identifier: GPL-2.0
/*
 * --verbs finds a provider's data path as code addresses (the context's
 * ops table) and puts uprobes at (file, file offset), which
 * rdt_verbs_addr_to_file() computes from /proc/self/maps.  There is no
 * mlx5 device here, so no mlx5 context and no ops table: this checks the
 * rest of the way on Debian's provider files themselves, mlx5's included.
 *
 *   provider-resolve PROVIDER.so...
 *
 * For each: dlopen it as libibverbs does, take the address of each
 * function it exports (mlx5dv_*, efadv_*, ...: in the same text segment
 * as its static post_send and poll_cq), resolve it, and check against
 * the ELF file itself (libelf: the symbol's value through its PT_LOAD
 * segment) that the file is the provider's real file (the .so in
 * libibverbs/ is a link) and the offset is the function's.  Prints
 * "PATH OFFSET NAME" per provider, for the uprobe the test then places.
 * Exit 0 if every provider with an exported function resolved exactly,
 * 1 if one did not, 2 on bad usage; a provider exporting no function
 * says so and counts as neither.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/rdt_bpf_int.h"

/* The file offset of virtual address @v in @e: through its PT_LOAD. */
static bool vaddr_to_off(Elf *e, uint64_t v, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		if (v >= ph.p_vaddr && v < ph.p_vaddr + ph.p_filesz) {
			*off = v - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/*
 * Check every defined, exported function of @path's dynamic symbol table.
 * Returns how many resolved exactly; *bad counts those that did not.
 */
static int check(const char *path, void *h, int *bad, char *first, size_t n,
		 uint64_t *first_off)
{
	char real[PATH_MAX];
	int fd, good = 0;
	Elf *e;
	Elf_Scn *scn = NULL;

	if (!realpath(path, real)) {
		printf("FAIL: %s: realpath failed\n", path);
		(*bad)++;
		return 0;
	}
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL))) {
		printf("FAIL: %s: cannot read it as ELF\n", real);
		(*bad)++;
		if (fd >= 0)
			close(fd);
		return 0;
	}
	/* Symbol versions: dlsym() gives a name's default version, so an
	 * older one (hidden) is not what it returns. */
	Elf_Data *vers = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym)
			vers = elf_getdata(scn, NULL);
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			GElf_Versym v;
			const char *name;
			char got[PATH_MAX];
			uint64_t want, off;
			void *a;

			if (vers && gelf_getversym(vers, (int)i, &v) && (v & 0x8000))
				continue;
			if (!gelf_getsym(d, (int)i, &s) ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF ||
			    GELF_ST_BIND(s.st_info) == STB_LOCAL)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || !(a = dlsym(h, name)))
				continue;
			if (!vaddr_to_off(e, s.st_value, &want)) {
				printf("FAIL: %s: %s's address 0x%" PRIx64 " is in no executable segment\n",
				       real, name, (uint64_t)s.st_value);
				(*bad)++;
				continue;
			}
			if (!rdt_verbs_addr_to_file((uintptr_t)a, got, sizeof(got), &off)) {
				printf("FAIL: %s: %s at %p: not resolved\n", real, name, a);
				(*bad)++;
				continue;
			}
			if (strcmp(got, real) || off != want) {
				printf("FAIL: %s: %s resolved to %s+0x%" PRIx64 ", want %s+0x%" PRIx64 "\n",
				       real, name, got, off, real, want);
				(*bad)++;
				continue;
			}
			if (!good++) {
				snprintf(first, n, "%s", name);
				*first_off = off;
			}
		}
	}
	elf_end(e);
	close(fd);
	return good;
}

int main(int argc, char **argv)
{
	int bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: provider-resolve PROVIDER.so...\n");
		return 2;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "provider-resolve: libelf: %s\n", elf_errmsg(-1));
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		/* As libibverbs loads a provider (RTLD_NOW, its own scope). */
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		char real[PATH_MAX], first[256] = "";
		uint64_t off = 0;
		int good;

		if (!h) {
			printf("FAIL: dlopen %s: %s\n", argv[i], dlerror());
			bad++;
			continue;
		}
		good = check(argv[i], h, &bad, first, sizeof(first), &off);
		if (good && realpath(argv[i], real))
			printf("%s 0x%" PRIx64 " %s (%d functions resolved)\n", real, off,
			       first, good);
		else if (!good)
			printf("none: %s exports no function\n", argv[i]);
		/* Kept open: an address must stay mapped while others load. */
	}
	return bad ? 1 : 0;
}
