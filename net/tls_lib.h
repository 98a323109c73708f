/*
 * tls_lib.h — OpenSSL, loaded the first time a TLS connection or an nkey
 * signature needs it (core/dl.h says why; a plaintext store never loads it).
 *
 * Every file that calls OpenSSL includes this header, and no OpenSSL header
 * after it: its names below resolve through the table an_tls_lib_load
 * fills.  The types, constants and macros are OpenSSL's own.
 */
#ifndef ANARCHON_TLS_LIB_H
#define ANARCHON_TLS_LIB_H

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "dl.h"

/* Every OpenSSL function the project calls (libssl's, and libcrypto's through it). */
#define AN_TLS_FUNCTIONS(X) \
	X(BIO_clear_flags) X(BIO_get_data) X(BIO_get_init) X(BIO_get_new_index) \
	X(BIO_get_shutdown) X(BIO_int_ctrl) X(BIO_meth_free) X(BIO_meth_new) \
	X(BIO_meth_set_create) X(BIO_meth_set_ctrl) X(BIO_meth_set_destroy) \
	X(BIO_meth_set_puts) X(BIO_meth_set_read) X(BIO_meth_set_write) X(BIO_new) \
	X(BIO_set_data) X(BIO_set_flags) X(BIO_set_init) X(BIO_set_shutdown) \
	X(BIO_test_flags) X(ERR_clear_error) X(ERR_peek_last_error) \
	X(ERR_reason_error_string) X(EVP_DigestSign) X(EVP_DigestSignInit) \
	X(EVP_EncodeBlock) X(EVP_MD_CTX_free) X(EVP_MD_CTX_new) X(EVP_PKEY_free) \
	X(EVP_PKEY_get_raw_public_key) X(EVP_PKEY_new_raw_private_key) \
	X(SSL_CTX_check_private_key) X(SSL_CTX_ctrl) X(SSL_CTX_free) \
	X(SSL_CTX_load_verify_locations) X(SSL_CTX_new) X(SSL_CTX_set_default_passwd_cb) \
	X(SSL_CTX_set_default_verify_paths) X(SSL_CTX_set_verify) \
	X(SSL_CTX_use_PrivateKey_file) X(SSL_CTX_use_certificate_chain_file) \
	X(SSL_connect) X(SSL_ctrl) X(SSL_free) X(SSL_get0_param) X(SSL_get_error) \
	X(SSL_get_verify_result) X(SSL_new) X(SSL_read_ex) X(SSL_set1_host) \
	X(SSL_set_bio) X(SSL_set_hostflags) X(SSL_shutdown) X(SSL_write_ex) \
	X(TLS_client_method) X(X509_VERIFY_PARAM_set1_ip_asc) X(X509_verify_cert_error_string)

AN_DL_TABLE(an_tls_lib_table, AN_TLS_FUNCTIONS);
extern an_tls_lib_table an_tls_lib;

/* Load OpenSSL once: AN_OK, or AN_E_CONFIG in err naming the package to install. */
an_error	an_tls_lib_load(an_err *err);

#ifndef AN_TLS_LIB_LOADER
#define BIO_clear_flags (an_tls_lib.BIO_clear_flags)
#define BIO_get_data (an_tls_lib.BIO_get_data)
#define BIO_get_init (an_tls_lib.BIO_get_init)
#define BIO_get_new_index (an_tls_lib.BIO_get_new_index)
#define BIO_get_shutdown (an_tls_lib.BIO_get_shutdown)
#define BIO_int_ctrl (an_tls_lib.BIO_int_ctrl)
#define BIO_meth_free (an_tls_lib.BIO_meth_free)
#define BIO_meth_new (an_tls_lib.BIO_meth_new)
#define BIO_meth_set_create (an_tls_lib.BIO_meth_set_create)
#define BIO_meth_set_ctrl (an_tls_lib.BIO_meth_set_ctrl)
#define BIO_meth_set_destroy (an_tls_lib.BIO_meth_set_destroy)
#define BIO_meth_set_puts (an_tls_lib.BIO_meth_set_puts)
#define BIO_meth_set_read (an_tls_lib.BIO_meth_set_read)
#define BIO_meth_set_write (an_tls_lib.BIO_meth_set_write)
#define BIO_new (an_tls_lib.BIO_new)
#define BIO_set_data (an_tls_lib.BIO_set_data)
#define BIO_set_flags (an_tls_lib.BIO_set_flags)
#define BIO_set_init (an_tls_lib.BIO_set_init)
#define BIO_set_shutdown (an_tls_lib.BIO_set_shutdown)
#define BIO_test_flags (an_tls_lib.BIO_test_flags)
#define ERR_clear_error (an_tls_lib.ERR_clear_error)
#define ERR_peek_last_error (an_tls_lib.ERR_peek_last_error)
#define ERR_reason_error_string (an_tls_lib.ERR_reason_error_string)
#define EVP_DigestSign (an_tls_lib.EVP_DigestSign)
#define EVP_DigestSignInit (an_tls_lib.EVP_DigestSignInit)
#define EVP_EncodeBlock (an_tls_lib.EVP_EncodeBlock)
#define EVP_MD_CTX_free (an_tls_lib.EVP_MD_CTX_free)
#define EVP_MD_CTX_new (an_tls_lib.EVP_MD_CTX_new)
#define EVP_PKEY_free (an_tls_lib.EVP_PKEY_free)
#define EVP_PKEY_get_raw_public_key (an_tls_lib.EVP_PKEY_get_raw_public_key)
#define EVP_PKEY_new_raw_private_key (an_tls_lib.EVP_PKEY_new_raw_private_key)
#define SSL_CTX_check_private_key (an_tls_lib.SSL_CTX_check_private_key)
#define SSL_CTX_ctrl (an_tls_lib.SSL_CTX_ctrl)
#define SSL_CTX_free (an_tls_lib.SSL_CTX_free)
#define SSL_CTX_load_verify_locations (an_tls_lib.SSL_CTX_load_verify_locations)
#define SSL_CTX_new (an_tls_lib.SSL_CTX_new)
#define SSL_CTX_set_default_passwd_cb (an_tls_lib.SSL_CTX_set_default_passwd_cb)
#define SSL_CTX_set_default_verify_paths (an_tls_lib.SSL_CTX_set_default_verify_paths)
#define SSL_CTX_set_verify (an_tls_lib.SSL_CTX_set_verify)
#define SSL_CTX_use_PrivateKey_file (an_tls_lib.SSL_CTX_use_PrivateKey_file)
#define SSL_CTX_use_certificate_chain_file (an_tls_lib.SSL_CTX_use_certificate_chain_file)
#define SSL_connect (an_tls_lib.SSL_connect)
#define SSL_ctrl (an_tls_lib.SSL_ctrl)
#define SSL_free (an_tls_lib.SSL_free)
#define SSL_get0_param (an_tls_lib.SSL_get0_param)
#define SSL_get_error (an_tls_lib.SSL_get_error)
#define SSL_get_verify_result (an_tls_lib.SSL_get_verify_result)
#define SSL_new (an_tls_lib.SSL_new)
#define SSL_read_ex (an_tls_lib.SSL_read_ex)
#define SSL_set1_host (an_tls_lib.SSL_set1_host)
#define SSL_set_bio (an_tls_lib.SSL_set_bio)
#define SSL_set_hostflags (an_tls_lib.SSL_set_hostflags)
#define SSL_shutdown (an_tls_lib.SSL_shutdown)
#define SSL_write_ex (an_tls_lib.SSL_write_ex)
#define TLS_client_method (an_tls_lib.TLS_client_method)
#define X509_VERIFY_PARAM_set1_ip_asc (an_tls_lib.X509_VERIFY_PARAM_set1_ip_asc)
#define X509_verify_cert_error_string (an_tls_lib.X509_verify_cert_error_string)
#endif

#endif							/* ANARCHON_TLS_LIB_H */
