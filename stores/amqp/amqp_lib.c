/*
 * amqp_lib.c — the table of rabbitmq-c's functions, filled on first use
 * (amqp_lib.h).
 */
#define AN_AMQP_LIB_LOADER
#include "config.h"
#include "amqp_lib.h"

AN_DL_LIBRARY(amqp_lib_load, an_amqp_lib, AN_AMQP_FUNCTIONS, AN_RABBITMQ_SONAME,
			  "the RabbitMQ store (amqp://, amqps://)", AN_RABBITMQ_PACKAGE)
