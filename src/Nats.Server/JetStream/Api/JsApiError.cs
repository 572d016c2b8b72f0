using System.Text.Json.Serialization;

namespace Nats.Server.JetStream.Api;

/// <summary>Go's ApiError: the <c>error</c> object of every failed JetStream API answer.</summary>
internal sealed class JsApiError
{
    public JsApiError(int code, int errCode, string description)
    {
        Code = code;
        ErrCode = errCode;
        Description = description;
    }

    [JsonPropertyName("code")] public int Code { get; }

    [JsonPropertyName("err_code")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int ErrCode { get; }

    [JsonPropertyName("description")] public string Description { get; }

    /// <summary>Fills one {placeholder}, as Go's generated New...Error(arg) helpers do.</summary>
    public JsApiError With(string placeholder, object value) =>
        new(Code, ErrCode, Description.Replace("{" + placeholder + "}", Convert.ToString(value, System.Globalization.CultureInfo.InvariantCulture)));

    /// <summary>The common "{err}" form.</summary>
    public JsApiError WithErr(string text) => With("err", text);

    public override string ToString() => $"{Description} ({ErrCode})";
}

/// <summary>An API handler's way to stop with a JetStream error.</summary>
internal sealed class JsApiException(JsApiError error) : Exception(error.Description)
{
    public JsApiError Error { get; } = error;
}
