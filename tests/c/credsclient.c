/*
 * credsclient logs in with nsc-style creds files through nats.c's natsOptions_SetUserCredentialsFromFiles
 * and prints one normalized line per step, the same transcript as tests/go/credsclient: a round trip on
 * greet.a, a publish to secret.x refused by the user's permissions, a login with the revoked user's
 * creds refused. Compiled by the integration tests against Debian's libnats-dev (gcc ... -lnats).
 *
 * Usage: credsclient <url> <user creds> <revoked user creds>
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nats/nats.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reported = PTHREAD_COND_INITIALIZER;
static char lastError[1024];

static void fail(const char *what, natsStatus s)
{
    fprintf(stderr, "%s: %s (%s)\n", what, natsStatus_GetText(s), nats_GetLastError(NULL));
    exit(1);
}

/* nats.c calls this from its own thread; the text is the server's -ERR as the connection kept it. */
static void onError(natsConnection *nc, natsSubscription *sub, natsStatus err, void *closure)
{
    const char *text = NULL;
    (void)sub;
    (void)closure;
    natsConnection_GetLastError(nc, &text);
    pthread_mutex_lock(&lock);
    snprintf(lastError, sizeof(lastError), "%s", text != NULL ? text : natsStatus_GetText(err));
    pthread_cond_signal(&reported);
    pthread_mutex_unlock(&lock);
}

static int containsIgnoreCase(const char *text, const char *part)
{
    size_t n = strlen(part);
    for (; *text != '\0'; text++)
    {
        size_t i = 0;
        while (i < n && text[i] != '\0' && tolower((unsigned char)text[i]) == tolower((unsigned char)part[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static natsOptions *options(const char *url, const char *creds, int withHandler)
{
    natsOptions *opts = NULL;
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK)
        s = natsOptions_SetURL(opts, url);
    if (s == NATS_OK)
        s = natsOptions_SetUserCredentialsFromFiles(opts, creds, NULL);
    if (s == NATS_OK)
        s = natsOptions_SetAllowReconnect(opts, false);
    if (s == NATS_OK && withHandler)
        s = natsOptions_SetErrorHandler(opts, onError, NULL);
    if (s != NATS_OK)
        fail("options", s);
    return opts;
}

int main(int argc, char **argv)
{
    natsConnection *nc = NULL;
    natsSubscription *sub = NULL;
    natsMsg *msg = NULL;
    natsOptions *opts;
    natsStatus s;
    struct timespec deadline;
    const char *op;
    const char *subject;
    const char *end;

    if (argc != 4)
    {
        fprintf(stderr, "usage: credsclient <url> <user creds> <revoked user creds>\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0);

    opts = options(argv[1], argv[2], 1);
    if ((s = natsConnection_Connect(&nc, opts)) != NATS_OK)
        fail("connect", s);
    printf("connected\n");

    if ((s = natsConnection_SubscribeSync(&sub, nc, "greet.>")) != NATS_OK)
        fail("subscribe", s);
    if ((s = natsConnection_PublishString(nc, "greet.a", "hello")) != NATS_OK)
        fail("publish", s);
    if ((s = natsSubscription_NextMsg(&msg, sub, 30000)) != NATS_OK)
        fail("receive", s);
    printf("received %s %.*s\n", natsMsg_GetSubject(msg), natsMsg_GetDataLength(msg), natsMsg_GetData(msg));
    natsMsg_Destroy(msg);

    if ((s = natsConnection_PublishString(nc, "secret.x", "no")) != NATS_OK)
        fail("publish secret", s);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    pthread_mutex_lock(&lock);
    while (lastError[0] == '\0')
    {
        if (pthread_cond_timedwait(&reported, &lock, &deadline) != 0)
        {
            fprintf(stderr, "no permissions violation reported\n");
            return 1;
        }
    }
    pthread_mutex_unlock(&lock);
    op = strstr(lastError, "Permissions Violation for ");
    if (op != NULL)
    {
        op += strlen("Permissions Violation for ");
        subject = strstr(op, " to ");
        subject = subject != NULL ? subject + 4 : op;
        if (*subject == '"')
            subject++;
        end = subject + strcspn(subject, "\" ");
        printf("violation %s %.*s\n", strncmp(op, "Publish", 7) == 0 ? "publish" : "subscription", (int)(end - subject), subject);
    }
    else
    {
        printf("error %s\n", lastError);
    }

    natsSubscription_Destroy(sub);
    natsConnection_Destroy(nc);
    natsOptions_Destroy(opts);

    nc = NULL;
    opts = options(argv[1], argv[3], 0);
    s = natsConnection_Connect(&nc, opts);
    if (s == NATS_OK)
    {
        printf("revoked connected\n");
        natsConnection_Destroy(nc);
    }
    else
    {
        const char *text = nats_GetLastError(NULL);
        if (containsIgnoreCase(text != NULL ? text : "", "authorization violation") || s == NATS_CONNECTION_AUTH_FAILED)
            printf("revoked Authorization Violation\n");
        else
            printf("revoked %s (%s)\n", natsStatus_GetText(s), text != NULL ? text : "");
    }
    natsOptions_Destroy(opts);
    nats_Close();
    return 0;
}
