/*
 * ssh-test-keys.h: fixed OpenSSH public key lines for the emulator's ImportKeyPair tests.
 *
 * Alibaba ECS and Tencent CVM take RSA keys (ECS also DSA and ECDSA) but not Ed25519,
 * which is all gc_keypair_generate makes, so their tests import these instead. The lines
 * came from ssh-keygen once; no private half is kept because nothing logs in with them.
 * TEST_RSA_A and TEST_RSA_B are distinct 2048-bit keys, TEST_ECDSA a nistp256 key and
 * TEST_DSA a 1024-bit DSA key.
 */
#ifndef GC_TEST_SSH_TEST_KEYS_H
#define GC_TEST_SSH_TEST_KEYS_H

#define TEST_RSA_A                                                                                 \
	"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCt8sti0nBHeRWLThBShmkgYYpmsht6xZkpvXlm3isy2/rR4QVj" \
	"9x9ljmZJzAS3xfh441fap3ubURuTjuI+Z1W92exdiPuZMoQjxrSSIZROl4XwKUxexzfDzpD/I+9obPXHUtrKQQFz" \
	"y2oCz4vt9p16/oIr+5QhfugPMz4X0+e7sWsH3y44gcLTFCke4vHGc/HPB1hqsdaI7Xn2Ph8MtKGOBSD8vLW/Wbkv" \
	"QOidYeLss/vaIpxpwr5mzX3aB6yiz/lSc24hYKeOQDIs8jx0lxbtK6Kb6hNBf5DqYQoqfrH9khHkIlQ/Et0wjC8I" \
	"2C633WHm599jnNtzXhHOdM9tp/kl"
#define TEST_RSA_B                                                                                 \
	"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCu6qnuH1NAOekF8+NVpUX8gZ8bwuqxNK7APYoLSuj0gs70Fj04" \
	"+3istNrbQfynHiDLka9jtWiT7LQl/7La/D8pGJs+fCZIj53KtqhLLuh1ktQ2o2Xz1NWX1TDQg8UnWHB0VNMchgKw" \
	"Tn0zVIw+N8vf/A4ivd8ujvzKyWF4y5Rz+629VFJ5fvTKtqilkXriSF/hsTMoQMqC47RjWELVtdxz3AOf0+/KfkVy" \
	"QDHAAwPRPqQcQSbu/5C18bQyoRrXmeVfCWYqy0iGgMg8WvX3gf8/YfNCMN+pWcTsxSSWn3MycOfP68oT1dk2C0sk" \
	"Z1DCjmvkWDBx5QjMcqk3Mwq0NGdD"
#define TEST_ECDSA                                                                                 \
	"ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBIptBHzypnOM7zEh" \
	"tYohhL2YV2Lt+mLSpwOuoxRzaRfVksMbMf94d6Kb6wr/TCPL90nJ2SpzIgsQOEDcuh35EGc="

#define TEST_DSA                                                                                   \
	"ssh-dss AAAAB3NzaC1kc3MAAACBAKe2lPBjzUDyzOS/Sj14fmrf2tzUkRURuyIghNlpa321ZcfQ0fFy3fewNmzu" \
	"w/XYikgdckBACgBDCBQR/3WiKaEMe7HmLywnWzj9PmE1aJIwSXr9mN+oSluRGzFhGVsLjsCpLmJm4i8e8ZmAEOKR" \
	"kgJNbgYhLuXRanUpGJ0mvr41AAAAFQCGk4RAiKr4WZTktC/EodTcw4TKKQAAAIAF7SFMegRnXJ3bwP2VzuD08MB8" \
	"HEmCQ6ldGf8omvWLsIt1zc3megEE0hVzo6NQlpu+m0Sf9D+HMeNcE/vDod25OrrVpcE6u3IXNN6lRUDAVmRkdEue" \
	"MtGEudrMBOWrycGzPyg3Zr4KthJZlRrl5NOVZzu3qD3VcAT3HJuxiGrILQAAAIBFAIxkGhTroTOS18RTURZI/Jz4" \
	"qoKpFAW57Hny0HcQzBxUaZN9PVFBxMED/UfXLS3/J5SSKTPi+r3sbzmbDeyabQfbcl/We604VWyWtcvyN6XIWF3+" \
	"IE0TgeSkp32+KSdJWRy63hDkEh0WLwU06kuVvMPtmbG9w8EmmkQIKmbkVw=="

#endif
