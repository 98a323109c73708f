/*
 * crc16.h — CRC-16/XMODEM (polynomial 0x1021, initial 0): the checksum
 * Redis Cluster hashes keys with and NATS nkeys end with.
 */
#ifndef ANARCHON_CRC16_H
#define ANARCHON_CRC16_H

#include <stddef.h>

unsigned	an_crc16_xmodem(const void *buf, size_t len);

#endif							/* ANARCHON_CRC16_H */
