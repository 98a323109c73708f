/*
 * crc16.c — CRC-16/XMODEM, bit by bit: the inputs are a few dozen bytes
 * (a key's hash tag, an nkey), too short for a table to pay.
 */
#include "crc16.h"

unsigned
an_crc16_xmodem(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	unsigned	crc = 0;

	for (size_t i = 0; i < len; i++)
	{
		crc ^= (unsigned) p[i] << 8;
		for (int b = 0; b < 8; b++)
			crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
	}
	return crc;
}
