/* A stand-in for Windows' bcryptprimitives.dll under wine 8, which lacks ProcessPrng.
 * Rust's std (1.78 and later) imports bcryptprimitives!ProcessPrng for its random keys
 * (library/std/src/sys/random/windows.rs); wine added it only in 9.x. Built by
 * scripts/wine-run with mingw-w64 and put next to the .exe it runs; never committed as a
 * binary. RtlGenRandom is advapi32!SystemFunction036. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
