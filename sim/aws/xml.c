/*
 * xml.c: the XML documents EC2 and STS answer with (aws.h): libxml2's text writer into
 * a memory buffer, so escaping is never by hand, then copied into the response.
 */
#include "sim/aws/aws.h"

void sim_aws_xml_start(struct sim_aws_xml *x)
{
	x->buf = xmlBufferCreate();
	x->w = xmlNewTextWriterMemory(x->buf, 0);
	xmlTextWriterStartDocument(x->w, NULL, "UTF-8", NULL);
}

void sim_aws_xml_send(struct sim_aws_xml *x, struct sim_resp *resp, int status)
{
	xmlTextWriterEndDocument(x->w);
	xmlFreeTextWriter(x->w);
	x->w = NULL;
	gc_buf_reset(&resp->body);
	gc_buf_add(&resp->body, xmlBufferContent(x->buf), (size_t)xmlBufferLength(x->buf));
	xmlBufferFree(x->buf);
	x->buf = NULL;
	resp->status = status;
}

void sim_aws_xml_discard(struct sim_aws_xml *x)
{
	if (x->w)
		xmlFreeTextWriter(x->w);
	if (x->buf)
		xmlBufferFree(x->buf);
	x->w = NULL;
	x->buf = NULL;
}
