/*
 * amqp_lib.c — the table of rabbitmq-c's functions, filled on first use
 * (amqp_lib.h).
 */
#define AN_AMQP_LIB_LOADER
#include "amqp_lib.h"

an_amqp_lib_table an_amqp_lib;

AN_DL_FILLER(fill, an_amqp_lib, AN_AMQP_FUNCTIONS)

static an_dl_lib lib = {
	.soname = AN_RABBITMQ_SONAME,
	.needed_for = "the RabbitMQ store (amqp://, amqps://)",
	.package = AN_RABBITMQ_PACKAGE,
	.fill = fill,
};

an_error
amqp_lib_load(an_err *err)
{
	return an_dl_load(&lib, err);
}
