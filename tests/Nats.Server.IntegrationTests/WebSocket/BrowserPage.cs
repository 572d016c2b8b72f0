using System.Diagnostics;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.WebSocket;

/// <summary>
/// Serves tests/js/browser/page.html with the browser build of nats.js (bundled by esbuild from
/// @nats-io/nats-core into a temp directory) on a local HTTP port, and receives the page's report.
/// </summary>
internal sealed class BrowserPage : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly string _dir;
    private readonly TaskCompletionSource<string> _result = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private BrowserPage(WebApplication app, string dir)
    {
        _app = app;
        _dir = dir;
    }

    public int Port { get; private set; }

    public Task<string> Result => _result.Task;

    public static async Task<BrowserPage> StartAsync()
    {
        var dir = Directory.CreateTempSubdirectory("nats-browser-").FullName;
        await BundleAsync(Path.Combine(dir, "nats.bundle.js"));
        File.Copy(Path.Combine(RepoPaths.JsScenarios, "browser", "page.html"), Path.Combine(dir, "page.html"));
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(System.Net.IPAddress.Loopback, 0));
        var app = builder.Build();
        var page = new BrowserPage(app, dir);
        app.MapPost("/result", async (HttpContext context) =>
        {
            using var reader = new StreamReader(context.Request.Body);
            page._result.TrySetResult(await reader.ReadToEndAsync());
        });
        app.MapGet("/{file}", async (string file, HttpContext context) =>
        {
            var path = Path.Combine(dir, Path.GetFileName(file));
            if (!File.Exists(path))
            {
                context.Response.StatusCode = 404;
                return;
            }
            context.Response.ContentType = file.EndsWith(".js", StringComparison.Ordinal) ? "text/javascript" : "text/html";
            await context.Response.SendFileAsync(path);
        });
        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        page.Port = new Uri(address).Port;
        return page;
    }

    /// <summary>Runs headless Chromium on the page until it reports; the browser is stopped by its own handle.</summary>
    public async Task<string> RunChromiumAsync(string query, TimeSpan timeout)
    {
        var profile = Directory.CreateTempSubdirectory("nats-chromium-").FullName;
        var psi = new ProcessStartInfo("chromium") { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false };
        foreach (var arg in new[]
        {
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run", $"--user-data-dir={profile}", $"http://127.0.0.1:{Port}/page.html?{query}",
        })
        {
            psi.ArgumentList.Add(arg);
        }
        using var browser = Process.Start(psi) ?? throw new InvalidOperationException("chromium did not start");
        var stderr = browser.StandardError.ReadToEndAsync();
        _ = browser.StandardOutput.ReadToEndAsync();
        try
        {
            return await Result.WaitAsync(timeout);
        }
        catch (TimeoutException)
        {
            browser.Kill(entireProcessTree: true);
            throw new TimeoutException($"the page never reported; chromium said:\n{await stderr}");
        }
        finally
        {
            if (!browser.HasExited)
            {
                browser.Kill(entireProcessTree: true);
            }
            await browser.WaitForExitAsync();
            try
            {
                Directory.Delete(profile, recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
        Directory.Delete(_dir, recursive: true);
    }

    private static async Task BundleAsync(string outFile)
    {
        var js = RepoPaths.JsScenarios;
        var psi = new ProcessStartInfo(Path.Combine(js, "node_modules", ".bin", "esbuild"))
        {
            WorkingDirectory = js,
            RedirectStandardError = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        foreach (var arg in new[] { "browser/entry.mjs", "--bundle", "--format=esm", "--platform=browser", $"--outfile={outFile}" })
        {
            psi.ArgumentList.Add(arg);
        }
        using var process = Process.Start(psi)!;
        var output = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"esbuild failed: {await output}");
        }
    }
}
