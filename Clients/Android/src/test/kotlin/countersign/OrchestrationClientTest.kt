package countersign

import countersign.client.Authenticator
import countersign.client.CountersignException
import countersign.client.HttpRequest
import countersign.client.HttpResponse
import countersign.client.HttpTransport
import countersign.client.OrchestrationClient
import countersign.client.PushRegistration
import countersign.client.SoftwareKeyStore
import countersign.core.ClientResponseOptionType
import countersign.core.DeviceProof
import countersign.core.ErrorCode
import kotlinx.coroutines.runBlocking
import org.json.JSONObject
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import java.io.IOException

/** The client against a scripted server: what it sends and how it reads the answers. */
@DisplayName("OrchestrationClient (scripted server)")
class OrchestrationClientTest {
    private val server = ScriptedServer()
    private val keys = KeysOnDisk()

    @AfterEach
    fun removeKeys() = keys.close()

    private fun step(token: String?, stepId: String = "client_input"): String = JSONObject()
        .put("interaction_id", "int_1").put("interaction_token", token ?: JSONObject.NULL)
        .put("journey_id", "mobile_login").put("journey_step_id", stepId).toString()

    /** An authenticator whose device key is registered and kept, with that key's SPKI in base64. */
    private suspend fun registeredDevice(): Pair<Authenticator, String> {
        val authenticator = Authenticator(SoftwareKeyStore(keys.file))
        val registration = authenticator.registerDevice("challenge", "Phone", "Test", PushRegistration.INBOX)
        authenticator.keepRegisteredKeys("ada@example.com")
        return authenticator to registration.getString("device_public_key")
    }

    @Test
    @DisplayName("a journey's rotating interaction token is sent with the next answer, and only the newest")
    fun rotatingToken() = runBlocking<Unit> {
        val client = OrchestrationClient("https://auth.example/", "bank-app", server)
        server.reply(200, step("first"))
        client.startJourney("mobile_login")
        server.reply(200, step("second"))
        client.submitClientResponse(ClientResponseOptionType.CLIENT_INPUT, JSONObject().put("email", "ada@example.com"))
        server.reply(200, step("third"))
        client.submitClientResponse(ClientResponseOptionType.CLIENT_INPUT, JSONObject().put("email", "ada@example.com"))

        assertEquals(
            listOf("https://auth.example/v1/journeys/mobile_login/start", "https://auth.example/v1/interactions/int_1/submit",
                "https://auth.example/v1/interactions/int_1/submit"),
            server.requests.map { it.url })
        assertEquals(listOf(null, "Bearer first", "Bearer second"), server.requests.map { it.headers["Authorization"] })
        assertTrue(server.requests.all { it.method == "POST" && it.headers["Content-Type"] == "application/json" })
        assertEquals("{\"client_id\":\"bank-app\"}", server.requests[0].json.toString())
        assertEquals("client_input", server.requests[1].json.getString("option"))
        assertEquals("ada@example.com", server.requests[1].json.getJSONObject("data").getString("email"))
    }

    @Test
    @DisplayName("a start carries its additional parameters, approval data and correlation id")
    fun startBody() = runBlocking<Unit> {
        val client = OrchestrationClient("https://auth.example", "bank-app", server)
        server.reply(200, step("first"))
        client.startJourney("mobile_transaction_signing", JSONObject().put("external_user_id", "ada@example.com"),
            mapOf("amount" to "1000", "currency" to "USD"), "corr-1")
        val body = server.requests.single().json
        assertEquals("ada@example.com", body.getJSONObject("additional_params").getString("external_user_id"))
        assertEquals("1000", body.getJSONObject("approval_data").getString("amount"))
        assertEquals("corr-1", body.getString("correlation_id"))
    }

    @Test
    @DisplayName("a refusal that repeats the step comes back with its error; one that does not throws its status, typed code and Retry-After")
    fun refusals() = runBlocking<Unit> {
        val client = OrchestrationClient("https://auth.example/", "bank-app", server)
        server.reply(200, step("first"))
        client.startJourney("mobile_login")
        server.reply(400, JSONObject(step("second")).put("error", JSONObject().put("code", "invalid_credentials").put("message", "No.")).toString())
        val repeated = client.submitClientResponse(ClientResponseOptionType.CLIENT_INPUT, JSONObject())
        assertEquals(ErrorCode.INVALID_CREDENTIALS, repeated.error!!.errorCode)

        server.reply(401, "{\"error\": {\"code\": \"invalid_token\", \"message\": \"The interaction token is not valid.\"}}")
        val refused = assertThrows(CountersignException.Server::class.java) { runBlocking { client.submitClientResponse("client_input") } }
        assertEquals(401, refused.status)
        assertEquals(ErrorCode.INVALID_TOKEN, refused.errorCode)
        assertEquals("The interaction token is not valid.", refused.error.message)
        assertEquals("Bearer second", server.requests.last().headers["Authorization"])

        server.reply(429, "{\"error\": {\"code\": \"slow_down\", \"message\": \"Wait.\"}}", mapOf("Retry-After" to "3"))
        val slow = assertThrows(CountersignException.Server::class.java) { runBlocking { client.submitClientResponse("client_input") } }
        assertEquals(ErrorCode.SLOW_DOWN, slow.errorCode)
        assertEquals(3L, slow.retryAfterSeconds)

        server.reply(502, "<html>bad gateway</html>")
        val unexpected = assertThrows(CountersignException.UnexpectedResponse::class.java) { runBlocking { client.submitClientResponse("client_input") } }
        assertEquals(502, unexpected.status)
    }

    @Test
    @DisplayName("answering before a journey started is refused without a request")
    fun noInteraction() {
        val client = OrchestrationClient("https://auth.example/", "bank-app", server)
        assertThrows(CountersignException.NoActiveInteraction::class.java) { runBlocking { client.submitClientResponse("client_input") } }
        assertThrows(CountersignException.NoActiveInteraction::class.java) { runBlocking { client.resendLastAnswer() } }
        assertTrue(server.requests.isEmpty())
    }

    @Test
    @DisplayName("a poll answered without a token keeps the token the client holds")
    fun pollWithoutToken() = runBlocking<Unit> {
        val client = OrchestrationClient("https://auth.example/", "bank-app", server)
        server.reply(200, step("first"))
        client.startJourney("web_login")
        server.reply(200, step(null, "mobile_approve_authentication"))
        client.submitClientResponse("client_input")
        server.reply(200, step("second"))
        client.submitClientResponse("client_input")
        assertEquals("Bearer first", server.requests.last().headers["Authorization"])
    }

    @Test
    @DisplayName("an answer whose reply was lost is sent again as it was, with the token it was sent with")
    fun lostAnswerResent() = runBlocking<Unit> {
        val dropping = object : HttpTransport {
            var dropNext = false
            override suspend fun send(request: HttpRequest): HttpResponse {
                val response = server.send(request)
                if (dropNext) { dropNext = false; throw IOException("connection reset") }
                return response
            }
        }
        val client = OrchestrationClient("https://auth.example/", "bank-app", dropping)
        server.reply(200, step("first"))
        client.startJourney("mobile_login")
        server.reply(200, step(null, "action:success"))
        dropping.dropNext = true
        assertThrows(IOException::class.java) { runBlocking { client.submitClientResponse("client_input", JSONObject().put("signedChallenge", "s1")) } }
        server.reply(200, step(null, "action:success"))
        val replayed = client.resendLastAnswer()
        assertEquals("action:success", replayed.journeyStepId)
        assertEquals(server.requests[1].json.toString(), server.requests[2].json.toString())
        assertEquals(listOf("Bearer first", "Bearer first"), server.requests.drop(1).map { it.headers["Authorization"] })
        // Answered: there is nothing left to send again.
        assertThrows(CountersignException.NoActiveInteraction::class.java) { runBlocking { client.resendLastAnswer() } }

        // An answer lost in a run that the app then starts over is not sent into the new run.
        server.reply(200, step("fourth"))
        dropping.dropNext = true
        assertThrows(IOException::class.java) { runBlocking { client.submitClientResponse("client_input") } }
        server.reply(200, JSONObject(step("fifth")).put("interaction_id", "int_2").toString())
        client.startJourney("mobile_login")
        assertThrows(CountersignException.NoActiveInteraction::class.java) { runBlocking { client.resendLastAnswer() } }
    }

    @Test
    @DisplayName("the inbox request carries the device id, the time and the device key's signature over method, path and time")
    fun signedInboxRequest() = runBlocking<Unit> {
        val (authenticator, devicePublicKey) = registeredDevice()
        val client = OrchestrationClient("https://auth.example/", "bank-app", server, clock = { 1_800_000_000L })
        server.reply(200, "{\"approvals\": [{\"approval_id\": \"apr_1\", \"client_id\": \"bank-app\", \"expires_at\": \"2027-01-15T08:00:00Z\", \"application\": \"Bank\"}]}")

        val approvals = client.pendingApprovals("dev_1", authenticator, wait = 20)
        assertEquals(listOf("apr_1"), approvals.map { it.approvalId })
        val request = server.requests.single()
        assertEquals("GET", request.method)
        assertEquals("https://auth.example/v1/devices/dev_1/pending?wait=20", request.url)
        assertEquals("dev_1", request.headers["Countersign-Device"])
        assertEquals("1800000000", request.headers["Countersign-Timestamp"])
        assertTrue(request.timeoutMillis >= 50_000)
        val signed = DeviceProof.requestMessage("GET", "/v1/devices/dev_1/pending?wait=20", 1_800_000_000L)
        assertTrue(verifies(devicePublicKey, signed, request.headers["Countersign-Signature"]!!))
        assertFalse(verifies(devicePublicKey, signed.replace("dev_1", "dev_2"), request.headers["Countersign-Signature"]!!))
    }

    @Test
    @DisplayName("behind a balancer's path prefix the inbox request keeps the base URL's path and signs the path from the server's root")
    fun inboxUnderAPathPrefix() = runBlocking<Unit> {
        val (authenticator, devicePublicKey) = registeredDevice()
        val client = OrchestrationClient("https://bank.example/countersign", "bank-app", server, clock = { 7L })
        server.reply(200, "{\"approvals\": []}")
        assertTrue(client.pendingApprovals("dev_1", authenticator, wait = 5).isEmpty())
        val request = server.requests.single()
        assertEquals("https://bank.example/countersign/v1/devices/dev_1/pending?wait=5", request.url)
        assertTrue(verifies(devicePublicKey,
            DeviceProof.requestMessage("GET", "/v1/devices/dev_1/pending?wait=5", 7L), request.headers["Countersign-Signature"]!!))
    }

    @Test
    @DisplayName("the mobile approve start sends the payload unchanged with a device proof over approval id and time")
    fun mobileApproveStart() = runBlocking<Unit> {
        val (authenticator, devicePublicKey) = registeredDevice()
        val client = OrchestrationClient("https://auth.example", "bank-app", server, clock = { 1_700_000_000L })
        val payload = mapOf("approval_id" to "apr_1", "client_id" to "other-native", "expires_at" to "2027-01-15T08:00:00Z", "application" to "Bank", "extra" to "x")
        server.reply(200, step("first", "mobile_biometrics_authentication"))
        client.startMobileApproveJourney(payload, "dev_1", authenticator)
        val body = server.requests.single().json
        assertEquals("https://auth.example/v1/mobile-approve/start", server.requests.single().url)
        assertEquals("other-native", body.getString("client_id"))
        assertEquals(payload, Vectors.map(body.getJSONObject("payload")))
        assertEquals("dev_1", body.getString("device_id"))
        assertEquals(1_700_000_000L, body.getLong("timestamp"))
        assertTrue(body.get("timestamp") is Number)
        assertTrue(verifies(devicePublicKey, "countersign-approve-v1\napr_1\n1700000000", body.getString("device_signature")))
        assertThrows(CountersignException.NotAnApproval::class.java) { runBlocking { client.startMobileApproveJourney(mapOf("client_id" to "x"), "dev_1", authenticator) } }
    }

    @Test
    @DisplayName("the push token set is what device registration sends")
    fun pushToken() {
        val client = OrchestrationClient("https://auth.example", "bank-app", server)
        assertEquals(PushRegistration.INBOX, client.pushRegistration)
        client.setPushToken("fcm-token", appId = "com.example.bank")
        assertEquals(PushRegistration("fcm", "fcm-token", "com.example.bank"), client.pushRegistration)
        assertNull(PushRegistration.INBOX.token)
    }
}
