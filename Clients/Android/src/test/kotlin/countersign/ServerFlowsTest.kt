package countersign

import countersign.client.CountersignException
import countersign.client.HttpRequest
import countersign.client.HttpResponse
import countersign.client.HttpTransport
import countersign.client.HttpUrlConnectionTransport
import countersign.client.OrchestrationClient
import countersign.core.ApprovalData
import countersign.core.ClientResponseOptionType
import countersign.core.DenialReason
import countersign.core.ErrorCode
import countersign.core.JourneyStepId
import countersign.core.JsonValues
import countersign.core.TransactionChallenge
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import java.io.IOException

/** The phone's flows against a real `countersign serve --dev`, through the default HttpURLConnection transport. */
@DisplayName("Flows against countersign serve --dev")
class ServerFlowsTest {
    private val input = ClientResponseOptionType.CLIENT_INPUT

    @Test
    @DisplayName("a phone registers from an enrollment link, then signs in on the phone with its biometric key")
    fun registerAndSignIn() = runBlocking<Unit> {
        Phone().use { phone ->
            val user = RealServer.newUser()
            val registered = phone.register(user)
            assertEquals(user, phone.user)
            assertTrue(phone.deviceId.isNotBlank())
            assertNotNull(registered.token)
            assertEquals(setOf("countersign.device", "countersign.biometric.$user"), phone.keys.aliases())

            var step = phone.client.startJourney("mobile_login")
            assertEquals(JourneyStepId.MOBILE_BIOMETRICS_AUTHENTICATION, step.journeyStepId)
            step = phone.client.submitClientResponse(input, phone.signIn(step))
            assertEquals(JourneyStepId.SUCCESS, step.journeyStepId, "$step")
            val claims = RealServer.claims(step.token!!)
            assertEquals(user, claims.getString("external_user_id"))
            assertEquals("demo-native", claims.getString("aud"))
        }
    }

    @Test
    @DisplayName("a web sign-in is approved on the phone with the web code: a wrong code repeats the step, the right one and biometrics approve it")
    fun webSignInWithCode() = runBlocking<Unit> {
        Phone().use { phone ->
            phone.register(RealServer.newUser())
            val browser = Browser()
            val waiting = browser.start(phone.user)
            val code = waiting.dataString("otp")!!

            val payload = phone.nextApproval()
            assertEquals("demo-native", payload.clientId)
            var step = phone.openApproval(payload)
            assertEquals(JourneyStepId.OTP_VALIDATION, step.journeyStepId, "$step")
            val wrong = if (code == "000000") "111111" else "000000"
            step = phone.client.submitClientResponse(input, JSONObject().put("passcode", wrong))
            assertEquals(JourneyStepId.OTP_VALIDATION, step.journeyStepId)
            assertEquals(ErrorCode.INVALID_CREDENTIALS, step.error!!.errorCode)
            step = phone.client.submitClientResponse(input, JSONObject().put("passcode", code))
            assertEquals(JourneyStepId.MOBILE_BIOMETRICS_AUTHENTICATION, step.journeyStepId, "$step")
            step = phone.client.submitClientResponse(input, phone.signIn(step))
            assertEquals(JourneyStepId.SUCCESS, step.journeyStepId, "$step")

            val done = browser.poll()
            assertEquals(JourneyStepId.SUCCESS, done.journeyStepId, "$done")
            val claims = RealServer.claims(done.token!!)
            assertEquals(phone.user, claims.getString("external_user_id"))
            assertEquals(phone.deviceId, claims.getString("device_id"))
            val amr = claims.getJSONArray("amr").let { array -> (0 until array.length()).map { array.getString(it) } }
            assertTrue(amr.containsAll(listOf("mobile_biometrics", "hwk", "code_otp")), "$amr")
        }
    }

    @Test
    @DisplayName("a payment is signed exactly as shown: the SDK recomputes the server's challenge, refuses other details, and the token carries the signed ones")
    fun signPayment() = runBlocking<Unit> {
        Phone().use { phone ->
            phone.register(RealServer.newUser())
            val browser = Browser()
            browser.start(phone.user, "web_transaction_signing", mapOf("amount" to "1250.00", "currency" to "EUR", "payee" to "ACME Ltd."))

            var step = phone.openApproval(phone.nextApproval())
            assertEquals(JourneyStepId.MOBILE_BIOMETRICS_TRANSACTION_SIGNING, step.journeyStepId, "$step")
            val shown = ApprovalData.fromJson(step.data!!.getJSONObject("approval_data")).values
            assertEquals(mapOf("amount" to "1250.00", "currency" to "EUR", "payee" to "ACME Ltd."), shown)
            val nonce = step.dataString("nonce")!!
            val challenge = step.dataString("biometrics_challenge")!!
            // The server's challenge is the one the SDK derives from the details (byte-compatible).
            assertEquals(challenge, TransactionChallenge.derive(ApprovalData(shown), nonce))

            // Details that differ from those the challenge was made of are never signed.
            assertThrows(CountersignException.ChallengeMismatch::class.java) {
                runBlocking { phone.authenticator.approvalNativeBiometrics(phone.user, shown + ("amount" to "12500.00"), nonce, challenge) }
            }
            assertThrows(CountersignException.NotAnAuthenticationChallenge::class.java) {
                runBlocking { phone.authenticator.authenticateNativeBiometrics(phone.user, challenge) }
            }

            step = phone.client.submitClientResponse(input, phone.authenticator.approvalNativeBiometrics(phone.user, shown, nonce, challenge))
            assertEquals(JourneyStepId.SUCCESS, step.journeyStepId, "$step")
            val done = browser.poll()
            assertEquals(JourneyStepId.SUCCESS, done.journeyStepId, "$done")
            assertEquals(shown, JsonValues.strings(RealServer.claims(done.token!!).getJSONObject("approval_data")))
        }
    }

    @Test
    @DisplayName("a transaction started on the phone alone is signed there, and its token carries the details")
    fun phoneOnlyTransaction() = runBlocking<Unit> {
        Phone().use { phone ->
            phone.register(RealServer.newUser())
            val details = mapOf("amount" to "1000", "currency" to "USD", "recipient" to "Merchant A", "transaction_id" to "txn_12345")
            var step = phone.client.startJourney("mobile_transaction_signing", JSONObject().put("external_user_id", phone.user), details)
            assertEquals(JourneyStepId.MOBILE_BIOMETRICS_TRANSACTION_SIGNING, step.journeyStepId, "$step")
            val shown = ApprovalData.fromJson(step.data!!.getJSONObject("approval_data")).values
            step = phone.client.submitClientResponse(input, phone.authenticator.approvalNativeBiometrics(
                phone.user, shown, step.dataString("nonce")!!, step.dataString("biometrics_challenge")!!))
            assertEquals(JourneyStepId.SUCCESS, step.journeyStepId, "$step")
            assertEquals(details, JsonValues.strings(RealServer.claims(step.token!!).getJSONObject("approval_data")))

            // Details the server refuses come back as a typed refusal naming the rule.
            val refused = assertThrows(CountersignException.Server::class.java) {
                runBlocking { phone.client.startJourney("mobile_transaction_signing", JSONObject().put("external_user_id", phone.user), mapOf("payee" to "<b>")) }
            }
            assertEquals(ErrorCode.INVALID_APPROVAL_DATA, refused.errorCode)
            assertEquals(400, refused.status)
        }
    }

    @Test
    @DisplayName("refusals that end nothing come back typed: an unknown journey, a web journey from the phone's client, a superseded token")
    fun typedRefusals() = runBlocking<Unit> {
        val client = OrchestrationClient(RealServer.url, "demo-native")
        val unknown = assertThrows(CountersignException.Server::class.java) { runBlocking { client.startJourney("no_such_journey") } }
        assertEquals(404, unknown.status)
        assertEquals(ErrorCode.NOT_FOUND, unknown.errorCode)
        val webJourney = assertThrows(CountersignException.Server::class.java) { runBlocking { client.startJourney("web_login") } }
        assertEquals(403, webJourney.status)
        assertEquals(ErrorCode.JOURNEY_NOT_FOR_CLIENT, webJourney.errorCode)

        // An answer with a token the server has since replaced is refused.
        val recorder = RecordingTransport()
        val browser = OrchestrationClient(RealServer.url, "demo-web", recorder)
        browser.startJourney("web_login")
        val first = recorder.last!!
        browser.submitClientResponse(input, JSONObject().put("email", RealServer.newUser()))
        val stale = HttpUrlConnectionTransport().send(HttpRequest(
            "POST", first.url.replace(Regex("/v1/journeys/.*"), "/v1/interactions/${recorder.lastInteraction}/submit"),
            mapOf("Content-Type" to "application/json", "Authorization" to "Bearer ${recorder.firstToken}"),
            "{\"option\":\"client_input\",\"data\":{}}".toByteArray(), 30_000))
        assertEquals(401, stale.status)
        assertEquals("invalid_token", JSONObject(String(stale.body)).getJSONObject("error").getString("code"))
    }

    @Test
    @DisplayName("\"this wasn't me\" denies the request, and the browser is told it was not approved")
    fun denyNotMe() = runBlocking<Unit> {
        Phone().use { phone ->
            phone.register(RealServer.newUser())
            val browser = Browser()
            browser.start(phone.user)
            val payload = phone.nextApproval()
            val opened = phone.openApproval(payload)
            assertEquals(JourneyStepId.OTP_VALIDATION, opened.journeyStepId)
            val denied = phone.client.submitClientResponse(ClientResponseOptionType.CANCEL, JSONObject().put("reason", DenialReason.NOT_MINE))
            assertNotEquals(JourneyStepId.SUCCESS, denied.journeyStepId, "$denied")

            val done = browser.poll()
            assertEquals(JourneyStepId.REJECTION, done.journeyStepId, "$done")
            assertNull(done.token)
            // The approval is closed: opening it again is refused.
            val again = assertThrows(CountersignException.Server::class.java) {
                runBlocking { phone.openApproval(payload) }
            }
            assertTrue(again.errorCode in setOf(ErrorCode.APPROVAL_CLOSED, ErrorCode.EXPIRED, ErrorCode.NOT_FOUND), again.error.code)
        }
    }

    @Test
    @DisplayName("the inbox long-poll is answered as soon as a request for the phone arrives")
    fun inboxLongPoll() = runBlocking<Unit> {
        Phone().use { phone ->
            phone.register(RealServer.newUser())
            assertTrue(phone.client.pendingApprovals(phone.deviceId, phone.authenticator).isEmpty())
            val started = System.nanoTime()
            val waiting = async { phone.client.pendingApprovals(phone.deviceId, phone.authenticator, wait = 25) }
            delay(1000)
            val browser = Browser()
            browser.start(phone.user)
            val approvals = waiting.await()
            val seconds = (System.nanoTime() - started) / 1_000_000_000.0
            assertEquals(1, approvals.size)
            assertTrue(seconds < 20, "answered after $seconds s")
            assertTrue(approvals.single().approvalId.isNotBlank())
            assertTrue(approvals.single().application.isNotBlank())
        }
    }

    @Test
    @DisplayName("a lost last answer is sent again and answered the same, and the browser's sign-in completes once")
    fun lostLastAnswer() = runBlocking<Unit> {
        val lossy = LossyTransport()
        Phone(transport = lossy).use { phone ->
            phone.register(RealServer.newUser())
            val browser = Browser()
            val code = browser.start(phone.user).dataString("otp")!!
            val opened = phone.openApproval(phone.nextApproval())
            assertEquals(JourneyStepId.OTP_VALIDATION, opened.journeyStepId)
            val step = phone.client.submitClientResponse(input, JSONObject().put("passcode", code))
            val answer = phone.signIn(step)
            lossy.loseNextReply = true
            assertThrows(IOException::class.java) { runBlocking { phone.client.submitClientResponse(input, answer) } }

            val replayed = phone.client.resendLastAnswer()
            assertEquals(JourneyStepId.SUCCESS, replayed.journeyStepId, "$replayed")
            val again = phone.client.submitClientResponse(input, answer)
            assertEquals(JourneyStepId.SUCCESS, again.journeyStepId, "sent again by hand, it is answered the same: $again")
            val submits = lossy.sent.filter { it.url.endsWith("/submit") }.takeLast(3)
            assertEquals(1, submits.map { it.headers["Authorization"] }.toSet().size, "all three carry the token of the lost answer")

            assertEquals(JourneyStepId.SUCCESS, browser.poll().journeyStepId)
        }
    }

    @Test
    @DisplayName("the server checks the device proof: another key, a stale or replayed signature, and another user's device are refused with their codes")
    fun deviceProofChecks() = runBlocking<Unit> {
        Phone().use { phone ->
            Phone().use { other ->
                phone.register(RealServer.newUser())
                other.register(RealServer.newUser())
                Browser().start(phone.user)
                val payload = phone.nextApproval()

                // The other phone's key, claiming this phone's device id.
                val wrongKey = assertThrows(CountersignException.Server::class.java) {
                    runBlocking { other.client.startMobileApproveJourney(payload, phone.deviceId, other.authenticator) }
                }
                assertEquals(401, wrongKey.status)
                assertEquals(ErrorCode.INVALID_TOKEN, wrongKey.errorCode)

                // Another user's device, with its own key.
                val notOwned = assertThrows(CountersignException.Server::class.java) {
                    runBlocking { other.client.startMobileApproveJourney(payload, other.deviceId, other.authenticator) }
                }
                assertEquals(403, notOwned.status)
                assertEquals(ErrorCode.DEVICE_NOT_OWNED, notOwned.errorCode)

                // A clock ten minutes behind.
                val slowClock = OrchestrationClient(RealServer.url, "demo-native", clock = { System.currentTimeMillis() / 1000 - 600 })
                val stale = assertThrows(CountersignException.Server::class.java) {
                    runBlocking { slowClock.startMobileApproveJourney(payload, phone.deviceId, phone.authenticator) }
                }
                assertEquals(ErrorCode.TIMESTAMP_OUT_OF_RANGE, stale.errorCode)

                // The same signed start sent twice: the second is a replay.
                val recorder = RecordingTransport()
                val recorded = OrchestrationClient(RealServer.url, "demo-native", recorder)
                val opened = recorded.startMobileApproveJourney(payload, phone.deviceId, phone.authenticator)
                assertEquals(JourneyStepId.OTP_VALIDATION, opened.journeyStepId)
                val replay = HttpUrlConnectionTransport().send(recorder.last!!)
                assertEquals(401, replay.status)
                assertEquals("signature_replayed", JSONObject(String(replay.body)).getJSONObject("error").getString("code"))

                // The inbox, signed by another key.
                val inbox = assertThrows(CountersignException.Server::class.java) {
                    runBlocking { other.client.pendingApprovals(phone.deviceId, other.authenticator) }
                }
                assertEquals(401, inbox.status)
            }
        }
    }
}

/** Keeps the last request it sent (so a test can send it again byte for byte), the first token and the last interaction it was given. */
class RecordingTransport : HttpTransport {
    private val real = HttpUrlConnectionTransport()
    var last: HttpRequest? = null
    var firstToken: String? = null
    var lastInteraction: String? = null

    override suspend fun send(request: HttpRequest): HttpResponse {
        last = request
        val response = real.send(request)
        val json = try { JSONObject(String(response.body)) } catch (notJson: org.json.JSONException) { null }
        json?.optString("interaction_token", null)?.let { if (firstToken == null) firstToken = it }
        json?.optString("interaction_id", null)?.let { lastInteraction = it }
        return response
    }
}

